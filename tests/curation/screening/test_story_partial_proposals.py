"""Issue 40, part 1, through `curate` on SQLite and PostgreSQL: the model-provenance rule holds for any subset of
the proposal groups. A story transition imported without `proposals.speech` (or with `"proposals": {}`) and a
changed value names its reviser or is refused with FILE:LINE; a partial record stored before the rule held
(from an earlier import) is shown by `curate story diff` and refused by `curate release build` by item and field,
never a `KeyError`; revising the fields names their writer and the release then states it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from typer.testing import CliRunner, Result

from curation.items import export_items
from curation.tables import Item
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.curation.screening.test_screening_story_kind import corpus as corpus  # noqa: F401  (fixture)
from tests.curation.screening.test_screening_story_kind import story_ws as story_ws  # noqa: F401  (fixture)

SPEECH = ("speech.speaker", "speech.utterance", "speech.emotion", "speech.speed", "speech.pitch", "speech.gender")


def curate(ws: Workspace, *args: str) -> Result:
    return CliRunner().invoke(app, ["-w", str(ws.root), *args], catch_exceptions=False)


def _count(ws: Workspace) -> int:
    with ws.session() as s:
        return s.execute(select(func.count()).select_from(Item)).scalar_one()


def _exported(ws: Workspace, tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    out = tmp_path / "export" / "items.jsonl"
    export_items(ws, out)
    return out, [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _rewrite(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


def test_a_partial_proposal_set_is_held_to_the_provenance_rule(story_ws, make_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    path, lines = _exported(story_ws, tmp_path)
    other = make_workspace("other")
    other.add_person("rev1", ["reviewer"])

    # the forgery of the issue: proposals.speech deleted, a changed scene, no revised_by
    del lines[0]["proposals"]["speech"]
    lines[0]["conditions"]["scene"] = "written by a person, credited to the model"
    lines[1]["proposals"] = {}
    _rewrite(path, lines)
    result = curate(other, "import", "items", str(path))
    assert result.exit_code == 2, result.output
    assert f"{path}:1: conditions.scene: differs from the model's proposal but revised_by names no reviewer" in (
        result.stderr
    )
    assert f"{path}:1: proposals.speech: no model proposal, and revised_by names no reviewer for speech.speaker" in (
        result.stderr
    )
    assert 'name who wrote it in revised_by (e.g. "speech": "rev1")' in result.stderr
    for group in ("book_meta", "conditions", "speech"):  # "proposals": {} credits the model with every group
        assert f"{path}:2: proposals.{group}: no model proposal" in result.stderr
    assert "Traceback" not in result.output and "KeyError" not in result.output
    assert _count(other) == 0  # a refused run stores nothing

    # a proposal that is no valid value of its group is named too
    lines[1]["proposals"] = {**lines[2]["proposals"], "speech": {**lines[2]["proposals"]["speech"], "value": {}}}
    _rewrite(path, lines[1:2])
    result = curate(other, "import", "items", str(path))
    assert result.exit_code == 2 and f"{path}:1: proposals: speech.value.utterance: required field is missing" in (
        result.stderr
    )
    assert _count(other) == 0

    # naming the revisers makes the same lines admissible: a whole group, or field by field
    lines[0]["revised_by"] = {"speech": "rev1", "conditions.scene": "rev1"}
    lines[1]["proposals"] = {}
    lines[1]["revised_by"] = {"book_meta": "rev1", "conditions": "rev1", **dict.fromkeys(SPEECH, "rev1")}
    _rewrite(path, lines)
    result = curate(other, "import", "items", str(path), "--json")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["created"]) == len(lines)

    shown = curate(other, "story", "diff", lines[0]["id"], "--json")
    assert shown.exit_code == 0 and not shown.stderr
    changes = {c["path"]: c for c in json.loads(shown.stdout)}
    assert changes["conditions.scene"]["by"] == "rev1" and changes["conditions.scene"]["proposal"] is True
    assert all(changes[p]["proposal"] is False and changes[p]["by"] == "rev1" for p in SPEECH)
    table = curate(other, "story", "diff", lines[1]["id"])
    assert table.exit_code == 0 and "(no proposal)" in table.stdout


def _story_demo(make_workspace) -> Workspace:  # type: ignore[no-untyped-def]
    from omnicurate.demo.story import build_story_demo

    root = make_workspace("story").root  # the test's database (SQLite or PostgreSQL), then the demo in it
    return build_story_demo(root, log=lambda _: None)


def _strip_proposal(ws: Workspace, item_id: str, group: str) -> None:
    """What an import before the rule held could store: the item without one proposal group, no reviser."""
    with ws.writing() as s:
        item = s.get(Item, item_id)
        assert item is not None
        extra = dict(item.extra)
        extra["proposals"] = {k: v for k, v in extra["proposals"].items() if k != group}
        item.extra = extra
        s.add(item)


def test_a_stored_partial_record_is_shown_and_refused_by_name_then_revised(make_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = _story_demo(make_workspace)
    try:
        shipped = [json.loads(x) for x in (ws.root / "releases/0.1.0/data/transitions.jsonl").read_text().splitlines()]
        item = shipped[0]["id"]
        _strip_proposal(ws, item, "speech")

        shown = curate(ws, "story", "diff", item)
        assert shown.exit_code == 0, shown.output
        assert "(no proposal)" in shown.stdout and "speech.emotion" in shown.stdout
        assert f"{item}: proposals.speech: no model proposal, and revised_by names no reviewer" in shown.stderr
        assert "curate story revise FILE" in shown.stderr
        as_json = json.loads(curate(ws, "story", "diff", item, "--json").stdout)
        assert {c["path"] for c in as_json if not c["proposal"]} == set(SPEECH)

        refused = curate(ws, "release", "build", "0.2.0")
        assert refused.exit_code == 2, refused.output
        assert f"item {item}: proposals.speech: no model proposal" in refused.stderr
        assert "release refused" in refused.stderr and "curate story revise FILE" in " ".join(refused.stderr.split())
        assert "KeyError" not in refused.output and "Traceback" not in refused.output
        assert not (ws.root / "releases" / "0.2.0").exists()
        assert "0.2.0" not in curate(ws, "release", "list").stdout

        # the remedy the message names: a reviewer's edit of each field records who wrote it
        current = next(t for t in shipped if t["id"] == item)["speech"]
        edits = {path: current[path.split(".")[1]] for path in SPEECH}
        revise = tmp_path / "revise.jsonl"
        revise.write_text(json.dumps({"item": item, "stage": "revise", "reviewer": "rev2", "edits": edits}) + "\n")
        assert curate(ws, "story", "revise", str(revise)).exit_code == 0
        assert curate(ws, "story", "audit").exit_code == 0
        built = curate(ws, "release", "build", "0.2.0")
        assert built.exit_code == 0, built.output
        rows = (ws.root / "releases/0.2.0/data/transitions.jsonl").read_text().splitlines()
        provenance = next(r for r in map(json.loads, rows) if r["id"] == item)["provenance"]
        assert provenance["speech"] == {
            "model": None,
            "prompt_hash": None,
            "revised_fields": sorted(SPEECH),
            "human_revised": True,
        }
        assert provenance["conditions"]["model"]  # the groups the model proposed keep their model
        assert curate(ws, "release", "verify", str(ws.root / "releases/0.2.0")).exit_code == 0
    finally:
        ws.close()
