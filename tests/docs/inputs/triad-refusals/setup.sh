# mcq-pool-of-five.md's refusals, in the mcq demo (ws): ann1 writes a new group kitchen-02 (two sisters of
# kitchen-01's, reworded) and rev1 signs kitchen-02-a's grammar first; reviews.jsonl then breaks the rules.
mkdir -p media
cp "$REPO"/omnicurate/demo/data/media/kitchen_* media/
python - <<'PY'
import json
import os

rows = [json.loads(line) for line in open(os.environ["REPO"] + "/omnicurate/demo/data/items.jsonl", encoding="utf-8")]
with open("kitchen-02.jsonl", "w", encoding="utf-8") as out:
    for row, suffix in zip(rows[:2], "ab"):
        row.update(id=f"kitchen-02-{suffix}", group="kitchen-02", context="Well, that was a truly useful tip.")
        out.write(json.dumps(row) + "\n")
scores = {"naturalness": 4, "clarity": 4, "artefacts": 4}
with open("grammar.jsonl", "w", encoding="utf-8") as out:
    out.write(json.dumps({"item": "kitchen-02-a", "stage": "grammar", "reviewer": "rev1", "verdict": "pass"}) + "\n")
with open("reviews.jsonl", "w", encoding="utf-8") as out:
    for line in (
        {"item": "kitchen-02-a", "stage": "grammar", "reviewer": "ann1", "verdict": "pass"},
        {"item": "kitchen-02-a", "stage": "audio_signoff", "reviewer": "rev1", "scores": scores},
        {"item": "kitchen-01-a", "stage": "grammar", "reviewer": "rev3", "verdict": "pass"},
    ):
        out.write(json.dumps(line) + "\n")
PY
curate -w ws import items kitchen-02.jsonl
curate -w ws import reviews grammar.jsonl
