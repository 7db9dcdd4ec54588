"""Query curation as the paper's team ran it (§2.1): candidate queries from a Parquet file of an existing
benchmark (written here with pyarrow, images as the {bytes, path} structs `datasets` stores), audited for
exact and near-duplicate queries and shared media, screened, refined with who and why, and promoted to
tasks that wait for checklist drafting; all through `curate`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from curation.workspace import Workspace
from devsupport.media_factory import make_image
from omnicurate.cli.main import app

runner = CliRunner()


def curate(ws: Workspace, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(ws.root), *args], catch_exceptions=False)


def png(tmp_path: Path, colour: str) -> dict:
    path = make_image(tmp_path / f"{colour}.png", colour, fmt="PNG")
    return {"bytes": path.read_bytes(), "path": f"{colour}.png"}


def benchmark(tmp_path: Path) -> Path:
    rows = [
        ("mm-1", "Describe the red shape in one sentence.", png(tmp_path, "red")),
        ("mm-2", "What colour is the square in this picture?", png(tmp_path, "blue")),
        ("mm-3", "What colour is the square in this picture?", png(tmp_path, "blue")),  # exact duplicate of mm-2
        (
            "mm-4",
            "Write a short poem about the green field in this picture and the wide blue sky above it, in four lines.",
            png(tmp_path, "green"),
        ),
        (
            "mm-5",
            "Write a short poem about the green field in this picture and the wide blue sky above it, in four lines, please.",
            png(tmp_path, "green"),
        ),  # near
        ("mm-6", "请用一句话描述图中的黄色物体。", png(tmp_path, "yellow")),
        ("mm-7", "Rate this explicit photo.", png(tmp_path, "purple")),
        ("mm-8", "asdf", png(tmp_path, "orange")),
    ]
    table = pa.table(
        {
            "qid": [r[0] for r in rows],
            "question": [r[1] for r in rows],
            "img": [r[2] for r in rows],
        }
    )
    path = tmp_path / "bench" / "test-00000-of-00001.parquet"
    path.parent.mkdir()
    pq.write_table(table, path)
    return path


def test_query_curation_from_parquet_to_tasks_ready_for_drafting(workspace: Workspace, tmp_path: Path) -> None:
    for name in ("ann1", "ann2"):
        workspace.add_person(name, ["reviewer"])
    source = benchmark(tmp_path)
    args = ["judge", "import", "queries", str(source.parent), "--map", "id=qid", "--map", "instruction=question"]
    args += ["--map", "image=img", "--set", "source=MMBench-mini", "--set", "license=CC-BY-4.0", "--set", "output=text"]
    imported = curate(workspace, *args, "--json")
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.stdout) == {"kind": "queries", "rows": 8, "added": 8, "unchanged": 0}
    assert json.loads(curate(workspace, *args, "--json").stdout)["unchanged"] == 8, "a second import adds nothing"
    bad_map = curate(workspace, "judge", "import", "queries", str(source), "--map", "question=instruction")
    assert bad_map.exit_code == 2 and "use FIELD=COLUMN with FIELD one of id, instruction" in bad_map.stderr

    listed = {q["id"]: q for q in json.loads(curate(workspace, "judge", "queries", "list", "--json").stdout)}
    assert listed["mm-3"]["state"] == "held" and listed["mm-3"]["reasons"] == ["duplicate:media", "duplicate:query"]
    assert listed["mm-5"]["reasons"] == ["duplicate:media", "duplicate:near_query"]
    assert listed["mm-2"]["state"] == listed["mm-4"]["state"] == "screen", "the first of a cluster is kept"

    # a model pre-screens the queries waiting for a screener; its suggestions never decide
    suggestions = {
        "mm-1": {"decision": "keep", "reason": None},
        "mm-2": {"decision": "keep", "reason": None},
        "mm-4": {"decision": "keep", "reason": None},
        "mm-6": {"decision": "keep", "reason": None},
        "mm-7": {"decision": "drop", "reason": "nsfw"},
        "mm-8": {"decision": "drop", "reason": "gibberish"},  # not a reason code: invalid, not repaired
    }
    replay = tmp_path / "prescreen.jsonl"
    replay.write_text("".join(json.dumps({"key": q, "output": json.dumps(v)}) + "\n" for q, v in suggestions.items()))
    pre = ["judge", "queries", "prescreen", "--backend", f"replay:{replay}", "--by", "ann1", "--json"]
    assert json.loads(curate(workspace, *pre).stdout) == {"suggested": 5, "invalid": 1, "already": 0}
    assert json.loads(curate(workspace, *pre).stdout) == {"suggested": 0, "invalid": 0, "already": 6}
    listed = {q["id"]: q for q in json.loads(curate(workspace, "judge", "queries", "list", "--json").stdout)}
    assert (listed["mm-7"]["suggestion"], listed["mm-8"]["suggestion"]) == ("drop:nsfw", "invalid")
    assert listed["mm-7"]["state"] == "screen" and listed["mm-3"]["suggestion"] is None, "held ones are not asked"

    records = tmp_path / "screen.jsonl"
    lines = [
        {"query": "mm-1", "stage": "query_screen", "reviewer": "ann1", "decision": "keep"},
        {"query": "mm-2", "stage": "query_screen", "reviewer": "ann1", "decision": "keep"},
        {"query": "mm-4", "stage": "query_screen", "reviewer": "ann2", "decision": "keep"},
        {"query": "mm-6", "stage": "query_screen", "reviewer": "ann2", "decision": "keep"},
        {"query": "mm-7", "stage": "query_screen", "reviewer": "ann1", "decision": "drop", "reason": "nsfw"},
        {"query": "mm-8", "stage": "query_screen", "reviewer": "ann1", "decision": "drop", "reason": "low_quality"},
        {"query": "mm-1", "stage": "query_refine", "reviewer": "ann2", "instruction": "Describe the red shape.",
         "why": "shorter; the sentence limit is implied"},
    ]  # fmt: skip
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(lines[0])
        + "\n"
        + json.dumps({**lines[4], "reason": None})
        + "\n"
        + json.dumps(lines[5] | {"reason": "meh"})
        + "\n"
    )
    refused = curate(workspace, "judge", "queries", "records", str(bad))
    assert refused.exit_code == 2
    assert f"{bad}:2" in refused.stderr and "needs a reason: nsfw, low_quality, out_of_scope" in refused.stderr
    assert f"{bad}:3: reason" in refused.stderr
    assert all(
        q["state"] != "ready" for q in json.loads(curate(workspace, "judge", "queries", "list", "--json").stdout)
    )
    records.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    recorded = curate(workspace, "judge", "queries", "records", str(records), "--json")
    assert json.loads(recorded.stdout) == {"query_screen": 6, "query_refine": 1}
    listed = {q["id"]: q for q in json.loads(curate(workspace, "judge", "queries", "list", "--json").stdout)}
    assert {q: s["state"] for q, s in listed.items()} == {
        "mm-1": "ready", "mm-2": "ready", "mm-3": "held", "mm-4": "ready", "mm-5": "held", "mm-6": "ready",
        "mm-7": "dropped", "mm-8": "dropped",
    }  # fmt: skip
    assert listed["mm-7"]["reasons"] == ["screen:nsfw"] and listed["mm-8"]["reasons"] == ["screen:low_quality"]
    (revision,) = json.loads(curate(workspace, "judge", "queries", "revisions", "mm-1", "--json").stdout)
    assert revision["by"] == "ann2" and revision["before"] == "Describe the red shape in one sentence."
    assert revision["instruction"] == "Describe the red shape." and revision["revision"] == 1
    assert revision["why"] == "shorter; the sentence limit is implied"

    promoted = curate(workspace, "judge", "queries", "promote", "--json")
    assert json.loads(promoted.stdout) == {"promoted": 4}
    assert json.loads(curate(workspace, "judge", "queries", "promote", "--json").stdout) == {"promoted": 0}
    checklists = json.loads(curate(workspace, "judge", "checklists", "--json").stdout)["tasks"]
    assert {t["id"]: t["state"] for t in checklists} == dict.fromkeys(["mm-1", "mm-2", "mm-4", "mm-6"], "drafted")
    from curation.kinds.judge import task_store

    task = task_store.task(workspace, "mm-1")
    assert task.instruction == "Describe the red shape." and task.modality_pair == "text+image->text"
    assert task.source == "MMBench-mini" and set(task.inputs) == {"image"}
    assert task_store.task(workspace, "mm-6").instruction == "请用一句话描述图中的黄色物体。"


def test_a_datasets_folder_and_a_jsonl_of_query_lines(workspace: Workspace, tmp_path: Path) -> None:
    """A `save_to_disk` folder (Arrow stream files, as `datasets` writes them) is read locally; a JSONL of
    query lines is imported as it is, its problems named FILE:LINE."""
    folder = tmp_path / "hf" / "train"
    folder.mkdir(parents=True)
    table = pa.table({"prompt": ["Compose a lullaby.", "Hum a tune."], "image": [None, png(tmp_path, "red")]})
    sink = pa.OSFile(str(folder / "data-00000-of-00001.arrow"), "wb")
    with sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    (folder / "dataset_info.json").write_text("{}")
    (folder / "state.json").write_text("{}")
    args = ["judge", "import", "queries", str(tmp_path / "hf"), "--map", "instruction=prompt", "--set", "source=Mini"]
    done = curate(workspace, *args, "--set", "license=MIT", "--set", "output=audio", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["added"] == 2
    from curation.kinds.judge.queries import queries

    stored = {q.id: q for q in queries(workspace)}
    assert set(stored) == {"Mini-000001", "Mini-000002"} and set(stored["Mini-000002"].inputs) == {"image"}

    lines = tmp_path / "queries.jsonl"
    good = {"id": "j-1", "instruction": "Sing.", "output": "audio", "source": "S", "license": "MIT"}
    lines.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "j-2", "output": "smell"}) + "\n")
    refused = curate(workspace, "judge", "import", "queries", str(lines))
    assert refused.exit_code == 2 and f"{lines}:2: output" in refused.stderr
    assert "j-1" not in {q.id for q in queries(workspace)}, "nothing imported"
