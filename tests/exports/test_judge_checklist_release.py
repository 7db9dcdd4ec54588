"""A checklist of 19 entries over six rubrics (the paper's average, Table 2) from imported stage records to a
release built and verified through the CLI; a record with too many entries in one rubric is refused on
import with its line, and a forged release checklist is caught by `curate release verify`."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.kinds.judge import draft_store, record_store, task_store
from curation.kinds.judge.rubrics import RUBRICS
from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.judge_sources import write_sources

runner = CliRunner()
TASK = "t2i-01"


def curate(ws: Workspace, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(ws.root), *args], catch_exceptions=False)


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def drafted(workspace: Workspace, tmp_path: Path) -> Workspace:
    sources = write_sources(tmp_path / "src")
    for name in ("tasks", "responses", "drafts"):
        keep = [x for x in sources[name].read_text().splitlines() if f'"{TASK}"' in x]
        sources[name].write_text("\n".join(keep) + "\n")
    for name in ("ann1", "ann2", "rev1"):
        workspace.add_person(name, ["reviewer"])
    workspace.add_person("curator", ["maintainer"])
    assert curate(workspace, "judge", "import", "tasks", str(sources["tasks"]), "--by", "curator").exit_code == 0
    assert curate(workspace, "judge", "import", "responses", str(sources["responses"])).exit_code == 0
    assert curate(workspace, "judge", "draft", "--backend", f"replay:{sources['drafts']}").exit_code == 0
    return workspace


def test_nineteen_entries_over_six_rubrics_from_import_to_a_verified_release(drafted: Workspace, tmp_path: Path):
    candidates = draft_store.drafted_candidates(drafted, TASK)
    assert Counter(e.rubric for e in candidates) == dict.fromkeys(RUBRICS, 3)
    every = [e.id for e in candidates]
    too_many = jsonl(
        tmp_path / "bad.jsonl",
        [{"task": TASK, "stage": "checklist_curation", "reviewer": "ann1", "selected": every[:3] + every[6:]}],
    )
    refused = curate(drafted, "judge", "import", "records", str(too_many))
    assert refused.exit_code == 2 and f"{too_many}:1: checklist_curation: trustworthiness: 0 entries" in refused.stderr
    assert record_store.task_checklist(drafted, TASK).state == "drafted"

    added = {"rubric": "creativity", "text": "Is the square's placement a deliberate choice?"}
    curation = {
        "task": TASK, "stage": "checklist_curation", "reviewer": "ann1", "selected": every, "added": [added]
    }  # fmt: skip
    first = jsonl(tmp_path / "curation.jsonl", [curation])
    assert curate(drafted, "judge", "import", "records", str(first)).exit_code == 0
    nineteen = [e.id for e in record_store.task_checklist(drafted, TASK).curation.candidates]
    assert len(nineteen) == 19
    records = [{"task": TASK, "stage": "checklist_crosscheck", "reviewer": "ann2", "selected": nineteen}]
    records += [
        {"response": r.id, "stage": "response_review", "reviewer": "rev1", "usable": True}
        for r in task_store.responses(drafted)
    ]
    imported = curate(drafted, "judge", "import", "records", str(jsonl(tmp_path / "rest.jsonl", records)))
    assert imported.exit_code == 0, imported.output
    listed = json.loads(curate(drafted, "judge", "checklists", "--json").stdout)["tasks"][0]
    assert listed["state"] == "final" and len(listed["entries"]) == 19
    assert listed["per_rubric"] == {**dict.fromkeys(RUBRICS, 3), "creativity": 4}
    assert curate(drafted, "judge", "samples").exit_code == 0

    built = curate(drafted, "release", "build", "1.0.0", "--json")
    assert built.exit_code == 0, built.output
    folder = Path(json.loads(built.stdout)["path"])
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["checklist_per_rubric"] == [1, 6]
    (row,) = [json.loads(x) for x in (folder / "data" / "checklists.jsonl").read_text().splitlines()]
    assert len(row["entries"]) == 19 and Counter(e["rubric"] for e in row["entries"])["creativity"] == 4
    # the curator who added an entry is named by a per-release pseudonym, never by name, anywhere in the release
    (by_person,) = [e["provenance"] for e in row["entries"] if e["provenance"]["by"] == "person"]
    assert by_person["person"].startswith("p-") and by_person["action"] == "added"
    released_text = "".join(p.read_text(encoding="utf-8") for p in folder.rglob("*.jsonl"))
    assert by_person["person"] in released_text and '"ann1"' not in released_text and '"ann2"' not in released_text
    assert curate(drafted, "release", "verify", str(folder)).exit_code == 0

    # a forger who puts a seventh entry into one rubric (and re-hashes the file) is caught
    extra = [{**row["entries"][0], "id": f"rele-forged{i}"} for i in range(4)]
    data = (json.dumps({**row, "entries": row["entries"] + extra}, sort_keys=True) + "\n").encode()
    (folder / "data" / "checklists.jsonl").write_bytes(data)
    for entry in manifest["files"]:
        if entry["path"] == "data/checklists.jsonl":
            entry["sha256"], entry["size"] = hashlib.sha256(data).hexdigest(), len(data)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    verified = curate(drafted, "release", "verify", str(folder), "--json")
    assert verified.exit_code == 1
    details = {(m["path"], m["detail"]) for m in json.loads(verified.stdout)["mismatches"]}
    assert ("data/checklists.jsonl", f"checklist of {TASK}: 7 relevance entries; a rubric holds 1 to 6") in details
