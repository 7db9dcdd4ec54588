# mcq-audio-production.md's examples: a new workspace ws with the mcq demo's kitchen group recorded by two voice
# actors (mei, joe) under producer ola, and three takes of kitchen-01-a (t2 is its audio) in takes.jsonl.
mkdir -p media takes
cp "$REPO"/omnicurate/demo/data/media/kitchen_* media/
cp "$REPO"/omnicurate/demo/data/media/stress_she.wav takes/t1.wav
cp "$REPO"/omnicurate/demo/data/media/kitchen_sincere.wav takes/t2.wav
cp "$REPO"/omnicurate/demo/data/media/stress_money.wav takes/t3.wav
python - <<'PY'
import json
import os

rows = [json.loads(line) for line in open(os.environ["REPO"] + "/omnicurate/demo/data/items.jsonl", encoding="utf-8")]
with open("items.jsonl", "w", encoding="utf-8") as out:
    for row, speaker in zip(rows[:2], ("mei", "joe")):
        row["provenance"]["audio"] = {
            "source": "voice_acting",
            "license": "CC-BY-4.0",
            "speakers": [speaker],
            "producer": "ola",
            "session": "2026-01-05 studio A",
            "equipment": "large-diaphragm condenser, 25 cm",
        }
        out.write(json.dumps(row) + "\n")
with open("takes.jsonl", "w", encoding="utf-8") as out:
    for n in (1, 2, 3):
        out.write(json.dumps({"item": "kitchen-01-a", "take": f"t{n}", "audio": f"takes/t{n}.wav"}) + "\n")
PY
curate init ws
curate -w ws people add ann1 --role author
curate -w ws people add mei --role speaker --role reviewer
curate -w ws people add joe --role speaker
curate -w ws people add ola --role producer
curate -w ws people add rev1 --role reviewer
curate -w ws import items items.jsonl
