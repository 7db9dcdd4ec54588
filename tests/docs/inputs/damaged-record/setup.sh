# releases-admission-record.md's damaged lines: a broken admission/records.jsonl:3 in the mcq demo's release
# (ws/releases/0.1.0), and admission/tasks.jsonl:2 without its candidates in the judge demo's
# (judge-demo/releases/1.0.0).
python - <<'PY'
import json

def lines(path):
    return open(path, encoding="utf-8").read().splitlines()

def write(path, rows):
    open(path, "w", encoding="utf-8").write("\n".join(rows) + "\n")

records = lines("ws/releases/0.1.0/admission/records.jsonl")
records[2] = records[2].replace('"', "", 1)
write("ws/releases/0.1.0/admission/records.jsonl", records)
tasks = lines("judge-demo/releases/1.0.0/admission/tasks.jsonl")
task = json.loads(tasks[1])
del task["candidates"]
tasks[1] = json.dumps(task)
write("judge-demo/releases/1.0.0/admission/tasks.jsonl", tasks)
PY
