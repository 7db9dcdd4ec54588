"""A record names what its reviewer saw (design.md, "Exposure and separation"): the item revision, or a group's
content hash; one against content that changed since is refused as ``stale:<stage>`` and nothing is recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from annotation_ui.logic import submit_review
from curation.derived import load_derived
from curation.errors import ValidationFailed
from curation.items import import_items
from curation.review_queues import group_content
from curation.reviews import import_reviews
from curation.tables import ReviewRecord
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items


@pytest.fixture
def ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    workspace.add_person("ann1", ["author"])
    for r in ("rev1", "rev2", "rev6"):
        workspace.add_person(r, ["reviewer"])
    import_items(workspace, write_items(tmp_path / "items", [item_row("a"), item_row("b", answer="B")]))
    return workspace


def edit(ws: Workspace, tmp_path: Path, context: str) -> None:
    """The author saves a new revision of item ``a`` (its text changed)."""
    import_items(ws, write_items(tmp_path / "items", [item_row("a", context=context)], "edit.jsonl"))


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def stored(ws: Workspace) -> list[tuple[str, str, str, int]]:
    with ws.session() as s:
        rows = s.scalars(select(ReviewRecord).order_by(ReviewRecord.id))
        return [(r.subject, r.stage, r.reviewer, r.revision) for r in rows]


def grammar(reviewer: str, **seen: object) -> dict:
    return {"item": "a", "stage": "grammar", "reviewer": reviewer, "verdict": "pass", **seen}


def test_import_naming_the_shown_revision_is_recorded_and_an_old_one_refused(ws: Workspace, tmp_path: Path) -> None:
    import_reviews(ws, write(tmp_path / "r1.jsonl", [grammar("rev1", revision=1)]))
    assert stored(ws) == [("item:a", "grammar", "rev1", 1)]
    edit(ws, tmp_path, "她说：“真是个好主意。” Sure, a really helpful suggestion.")
    assert ws.item("a").revision == 2
    path = write(tmp_path / "r2.jsonl", [grammar("rev2", revision=2), grammar("rev1", revision=1)])
    with pytest.raises(ValidationFailed) as caught:
        import_reviews(ws, path)
    (problem,) = caught.value.problems
    assert (problem.file, problem.line, problem.field) == (str(path), 2, "revision")
    assert problem.message.startswith("stale:grammar: 'a' changed since")
    assert "revision 1, now 2" in problem.message
    assert stored(ws) == [("item:a", "grammar", "rev1", 1)]  # the whole file refused: rev2's line is not stored


def test_import_without_a_revision_keeps_todays_behaviour(ws: Workspace, tmp_path: Path) -> None:
    edit(ws, tmp_path, "A changed context, revision two.")
    import_reviews(ws, write(tmp_path / "r.jsonl", [grammar("rev1")]))
    assert stored(ws) == [("item:a", "grammar", "rev1", 2)]


@pytest.mark.parametrize(
    ("seen", "field", "words"),
    [
        ({"revision": True}, "revision", "whole number from 1"),
        ({"revision": "1"}, "revision", "whole number from 1"),
        ({"revision": 0}, "revision", "whole number from 1"),
        ({"revision": 7}, "revision", "has no revision 7"),
        ({"content": ""}, "content", "content hash"),
        ({"revision": 1, "content": "x"}, "content", "not both"),
    ],
)
def test_a_malformed_seen_field_names_line_and_field(
    ws: Workspace, tmp_path: Path, seen: dict, field: str, words: str
) -> None:
    path = write(tmp_path / "r.jsonl", [grammar("rev1", revision=1), grammar("rev2", **seen)])
    with pytest.raises(ValidationFailed) as caught:
        import_reviews(ws, path)
    assert [(p.line, p.field) for p in caught.value.problems] == [(2, field)]
    assert words in caught.value.problems[0].message
    assert stored(ws) == []


def test_group_record_naming_old_content_is_stale(ws: Workspace, tmp_path: Path) -> None:
    before = group_content(load_derived(ws), "group_integration", "g1")
    record = {"group": "g1", "stage": "group_integration", "reviewer": "rev6", "verdict": "pass"}
    edit(ws, tmp_path, "The sister's text changed after the group was shown.")
    with pytest.raises(ValidationFailed) as caught:
        import_reviews(ws, write(tmp_path / "g.jsonl", [{**record, "content": before}]))
    assert caught.value.problems[0].message.startswith("stale:group_integration: a sister of group 'g1' changed")
    now = group_content(load_derived(ws), "group_integration", "g1")
    assert now != before
    import_reviews(ws, write(tmp_path / "g2.jsonl", [{**record, "content": now}]))
    assert stored(ws) == [("group:g1", "group_integration", "rev6", 0)]


def test_a_page_submission_carries_the_revision_it_showed(ws: Workspace, tmp_path: Path) -> None:
    edit(ws, tmp_path, "Edited in another browser while the reviewer had revision 1 open.")
    with pytest.raises(ValidationFailed, match=r"stale:grammar"):
        submit_review(ws, grammar("rev1", revision=1))
    assert stored(ws) == []
    assert submit_review(ws, grammar("rev1", revision=2)).recorded == 1


def test_curate_import_reviews_names_a_stale_line_and_exits_2(ws: Workspace, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from omnicurate.cli.main import app

    edit(ws, tmp_path, "The author's edit, saved after the reviews were written.")
    path = write(tmp_path / "reviews.jsonl", [grammar("rev2", revision=2), grammar("rev1", revision=1)])
    result = CliRunner().invoke(app, ["-w", str(ws.root), "import", "reviews", str(path)], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert f"{path}:2: revision: stale:grammar: 'a' changed since its reviewer saw it (revision 1, now 2)" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr and stored(ws) == []
