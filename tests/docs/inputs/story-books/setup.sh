# story-books.md's named books, in the story demo's folder: kito.epub (a copy of one of the demo's EPUBs) and
# hawa/, the page's book.json example with two of the demo's illustrations.
cp library/bk00001.epub kito.epub
mkdir -p hawa/img
python - <<'PY'
import json, zipfile

with zipfile.ZipFile("library/bk00002.epub") as book:
    open("hawa/p01.jpg", "wb").write(book.read("EPUB/images/p01.jpg"))
    open("hawa/img/p02.jpg", "wb").write(book.read("EPUB/images/p02.jpg"))
book = {"id": "hawa-well", "title": "Hawa's Well", "language": "sw", "license": "CC-BY-4.0",
        "attribution": "Story by Hawa; illustrations by Idris", "collection": "african_storybook",
        "url": "https://example.org/hawa",
        "pages": [{"image": "p01.jpg", "text": "Hawa alikwenda kisimani."},
                  {"image": "img/p02.jpg", "text": "«Maji!» alisema Hawa."}]}
json.dump(book, open("hawa/book.json", "w", encoding="utf-8"), ensure_ascii=False)
PY
