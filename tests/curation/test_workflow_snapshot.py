"""`curate status --json` and `curate funnel --json` on one workspace holding all three kinds (the mcq demo with
its adjudication, gates and audits, the story demo's screened and reviewed transitions, the judge demo's
curated, cross-checked and adjudicated tasks) match, byte for byte, what the derivation gave before it was
made fast (issue 27), on SQLite and PostgreSQL alike, derived in one process or split across two, and read
from what an earlier run kept.

The expected documents in ``data/status_three_kinds.json`` were written by the derivation as it was before
that work. A change of a review rule or of the demos changes them on purpose: rewrite the file with
``CURATE_WRITE_SNAPSHOT=1 python -m pytest tests/curation/test_workflow_snapshot.py -k sqlite`` and say
why in the commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.status_memo import MEMO_PATH
from curation.workspace import Workspace
from omnicurate.cli.main import app

SNAPSHOT = Path(__file__).parent / "data" / "status_three_kinds.json"
runner = CliRunner()


def _three_kinds(root: Path, make_workspace) -> Path:  # type: ignore[no-untyped-def]
    """The three demos built into one workspace (the story demo's release is left out: it would take the
    mcq demo's version number)."""
    from omnicurate.demo import build_demo, story
    from omnicurate.demo.judge import build_judge_demo

    ws: Workspace = make_workspace("three")
    for name in ("ann1", "ann2"):  # an mcq author in one demo, a judge reviewer in the other
        ws.add_person(name, ["author", "reviewer"])
    ws.close()
    quiet = lambda _msg: None  # noqa: E731
    build_demo(ws.root, log=quiet).close()
    release = story._release
    story._release = lambda ws, log: None  # type: ignore[assignment]
    try:
        story.build_story_demo(ws.root, log=quiet).close()
    finally:
        story._release = release  # type: ignore[assignment]
    build_judge_demo(ws.root, log=quiet).close()
    return ws.root


def _documents(root: Path) -> dict[str, str]:
    out = {}
    for command in ("status", "funnel"):
        result = runner.invoke(app, ["-w", str(root), command, "--json"])
        assert result.exit_code == 0, result.output
        out[command] = result.stdout
    return out


@pytest.mark.slow
def test_status_and_funnel_of_three_kinds_are_unchanged(tmp_path: Path, make_workspace, request) -> None:  # type: ignore[no-untyped-def]
    root = _three_kinds(tmp_path, make_workspace)
    found = _documents(root)
    if os.environ.get("CURATE_WRITE_SNAPSHOT"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    expected = json.loads(SNAPSHOT.read_text())
    kinds = {row["kind"] for row in json.loads(found["status"])}
    assert kinds == {"mcq", "story_transition", "judge_task"}
    states = {row["state"] for row in json.loads(found["status"])}
    assert {"admitted", "returned", "held", "in_review"} <= states
    assert found["status"] == expected["status"]
    assert found["funnel"] == expected["funnel"]

    # the funnel above read the statuses the status kept (curation.status_memo); from here on nothing is kept
    # (a file stands where the memo's folder would be), so each command derives every group
    assert (root / MEMO_PATH).is_file()
    (root / MEMO_PATH).unlink()
    (root / MEMO_PATH.parent).rmdir()
    (root / MEMO_PATH.parent).write_text("", encoding="utf-8")
    # derived on two cores, as both commands do at 10,000 items (curation.split_derivation): the same documents
    forks = request.getfixturevalue("forks")  # from here on: split from the first item, forks noted
    assert _documents(root) == {"status": expected["status"], "funnel": expected["funnel"]}
    assert len(forks) == 2, "status and funnel each split the derivation"
