"""Issue 22, case 7, on SQLite and PostgreSQL: a decision that would change nothing exits 2 with a message
(`decide ... override --stage filter` on an mcq item, `decide restore` on a live item), and two contradicting
records for one item, stage and reviewer in one file are refused instead of the later winning silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from curation.errors import ValidationFailed
from curation.items import import_items
from curation.reviews import import_reviews
from curation.tables import Decision, ReviewRecord
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.curation.test_adjudication import write
from tests.media_factory import item_row, write_items

runner = CliRunner()


@pytest.fixture
def ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    workspace.add_person("ann1", ["author"])
    workspace.add_person("maya", ["maintainer"])
    for name in ("g1", "g2"):
        workspace.add_person(name, ["reviewer"])
    import_items(workspace, write_items(tmp_path / "items", [item_row("a")]))
    return workspace


def _decide(ws: Workspace, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(ws.root), "decide", "a", *args, "--by", "maya", "--reason", "why not"])


def _decisions(ws: Workspace) -> list[str]:
    with ws.session() as s:
        return list(s.execute(select(Decision.kind)).scalars())


def test_override_of_a_stage_the_kind_lacks_exits_2(ws: Workspace) -> None:
    result = _decide(ws, "override", "--stage", "filter", "--verdict", "pass")
    assert result.exit_code == 2
    assert "'filter' is not a stage of mcq items like 'a'" in result.output
    assert _decisions(ws) == []
    assert _decide(ws, "override", "--stage", "grammar", "--verdict", "pass").exit_code == 0


def test_restore_of_a_live_item_exits_2(ws: Workspace) -> None:
    result = _decide(ws, "restore")
    assert result.exit_code == 2 and "'a' is not discarded; there is nothing to restore" in result.output
    assert _decide(ws, "discard").exit_code == 0
    assert _decide(ws, "restore").exit_code == 0
    assert _decide(ws, "restore").exit_code == 2  # restored already
    assert _decisions(ws) == ["discard", "restore"]


def test_contradicting_records_in_one_file_are_refused(ws: Workspace, tmp_path: Path) -> None:
    rows = [
        {"item": "a", "stage": "grammar", "reviewer": "g1", "verdict": "pass"},
        {"item": "a", "stage": "grammar", "reviewer": "g2", "verdict": "pass"},
        {"item": "a", "stage": "grammar", "reviewer": "g1", "verdict": "fail", "note": "on second thought"},
    ]
    path = write(tmp_path / "r.jsonl", rows)
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, path)
    assert f"{path}:3: reviewer: contradicts line 1 (same a, stage and reviewer)" in str(exc.value)
    with ws.session() as s:
        assert s.execute(select(ReviewRecord)).first() is None
    import_reviews(ws, write(tmp_path / "ok.jsonl", [rows[0], rows[1], rows[0]]))  # a repeated record is harmless
