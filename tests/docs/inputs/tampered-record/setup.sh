# releases-admission-record.md's differences, in the mcq demo's release (run in demo-workspace/): the answer
# check of kitchen-01-a (admission/records.jsonl:8) now answers B, and its full-view probe favours B.
python - <<'PY'
import json

def rewrite(path, change):
    lines = [json.loads(line) for line in open(path, encoding="utf-8")]
    for number, line in enumerate(lines, 1):
        change(number, line)
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(json.dumps(line, separators=(",", ":"), sort_keys=True) + "\n" for line in lines)

def answer(number, line):
    if number == 8:
        line["payload"]["answer"] = "B"

def probe(number, line):
    if line["item"] == "kitchen-01-a" and line["view"] == "text+image+audio":
        line["probs"] = {"A": 0.1, "B": 0.8, "C": 0.05, "D": 0.05}

rewrite("releases/0.1.0/admission/records.jsonl", answer)
rewrite("releases/0.1.0/admission/probes.jsonl", probe)
PY
