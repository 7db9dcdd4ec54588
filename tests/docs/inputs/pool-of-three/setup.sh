# mcq-pool-of-five.md's staffing example: a new workspace ws with a pool of three (p1 writes, p2 and p3
# review) and p1's two sisters of the mcq demo's kitchen group.
mkdir -p media
cp "$REPO"/omnicurate/demo/data/media/kitchen_* media/
python - <<'PY'
import json
import os

rows = [json.loads(line) for line in open(os.environ["REPO"] + "/omnicurate/demo/data/items.jsonl", encoding="utf-8")]
with open("items.jsonl", "w", encoding="utf-8") as out:
    for row in rows[:2]:
        row["author"] = "p1"
        out.write(json.dumps(row) + "\n")
PY
curate init ws
curate -w ws people add p1 --role author
curate -w ws people add p2 --role reviewer
curate -w ws people add p3 --role reviewer
curate -w ws import items items.jsonl
