# integrity-guards.md's refusals: items.jsonl whose second item's audio is "All rights reserved", and a book
# folder library/closed under that licence (two of the mcq demo's drawings as its pages).
mkdir -p media library/closed
cp "$REPO"/omnicurate/demo/data/media/kitchen_* media/
python - <<'PY'
import json, shutil

lines = [json.loads(line) for line in open(f"{__import__('os').environ['REPO']}/omnicurate/demo/data/items.jsonl")][:2]
lines[1]["provenance"]["audio"]["license"] = "All rights reserved"
with open("items.jsonl", "w", encoding="utf-8") as out:
    out.writelines(json.dumps(line) + "\n" for line in lines)
for name in ("a.jpg", "b.jpg"):
    shutil.copy("media/kitchen_neutral.jpg" if name == "a.jpg" else "media/kitchen_smile.jpg", f"library/closed/{name}")
book = {"title": "Closed", "language": "en", "license": "All rights reserved",
        "pages": [{"image": "a.jpg", "text": "One."}, {"image": "b.jpg", "text": "Two."}]}
json.dump(book, open("library/closed/book.json", "w", encoding="utf-8"))
PY
