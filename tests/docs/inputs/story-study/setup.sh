# A story study's inputs over a story demo release ($RELEASE, default releases/0.1.0: run in story-demo/):
# three systems' text for every released transition (outputs.jsonl), two judges' text-track scores
# (judges.jsonl; judge-b finds sys-c's answer on the first transition invalid), and flagged.txt naming one.
RELEASE=${RELEASE:-releases/0.1.0} python - <<'PY'
import json
import os

transitions = [json.loads(line)["id"] for line in open(os.environ["RELEASE"] + "/data/transitions.jsonl", encoding="utf-8")]
quality = {"sys-a": 8, "sys-b": 6, "sys-c": 4}
with open("outputs.jsonl", "w", encoding="utf-8") as out, open("judges.jsonl", "w", encoding="utf-8") as judged:
    for system, base in quality.items():
        for n, transition in enumerate(transitions):
            out.write(json.dumps({"system": system, "transition": transition, "text": f"{system} writes page {n}."}) + "\n")
            for judge, shift in (("judge-a", 0), ("judge-b", 1)):
                score = max(1, min(10, base + shift + (n % 3) - 1))
                scores = None if (judge, system, n) == ("judge-b", "sys-c", 0) else {
                    "metadata_alignment": score, "continuity": score, "condition_compliance": score,
                    "ground_truth_consistency": score,
                }
                line = {"judge": judge, "system": system, "transition": transition, "track": "text", "scores": scores}
                judged.write(json.dumps(line) + "\n")
with open("flagged.txt", "w", encoding="utf-8") as flagged:
    flagged.write(f"# a subset to leave out\n{transitions[1]}\n")
PY
