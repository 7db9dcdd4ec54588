"""Issue 40, part 3, through `curate` on SQLite and PostgreSQL: an optional text (a review note, a filter or
image-screening reason, a story revise note) may be empty but never only whitespace, and a candidate page's
narration may be empty but never only whitespace. Each refusal names FILE:LINE and the field, exits 2 and stores
nothing; the same file with the text written (or left out) goes in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner, Result

from curation.items import import_items
from curation.screening.tables import Candidate
from curation.tables import Event, Item, ReviewRecord
from curation.workspace import Workspace
from devsupport.media_factory import item_row, write_items
from devsupport.reviews import REVIEWERS
from omnicurate.cli.main import app
from tests.curation.screening.test_screening_story_kind import corpus as corpus  # noqa: F401  (fixture)
from tests.curation.screening.test_screening_story_kind import story_ws as story_ws  # noqa: F401  (fixture)

BLANKS = ["   ", "\t", "\n", " \u3000 ", "\u2028", "\xa0"]
"""Text of nothing but whitespace: spaces, a tab, a newline, an ideographic space, a line separator, NBSP."""
REFUSED = 'holds only whitespace; write it, or leave it out ("") for none'


def curate(ws: Workspace, *args: str) -> Result:
    result = CliRunner().invoke(app, ["-w", str(ws.root), *args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def count(ws: Workspace, table: Any) -> int:
    with ws.session() as s:
        return int(s.execute(select(func.count()).select_from(table)).scalar_one())


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def mcq_ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    workspace.add_person("ann1", ["author"])
    for name in REVIEWERS:
        workspace.add_person(name, ["reviewer"])
    import_items(workspace, write_items(tmp_path / "in", [item_row("w-a", answer="A"), item_row("w-b", answer="B")]))
    return workspace


def test_a_review_note_of_only_whitespace_is_refused(mcq_ws: Workspace, tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"item": "w-a", "stage": "grammar", "reviewer": "rev1", "verdict": "fail", "note": BLANKS[0]},
        {"item": "w-a", "stage": "answer_check", "reviewer": "rev5", "answer": "A", "note": BLANKS[1]},
        {"item": "w-b", "stage": "grammar", "reviewer": "rev1", "verdict": "pass", "note": BLANKS[3]},
        {"group": "g1", "stage": "group_integration", "reviewer": "rev6", "verdict": "fail", "note": BLANKS[4]},
        {"item": "w-b", "stage": "image_screening", "reviewer": "rev2", "verdict": "fail", "reason": BLANKS[5]},
    ]
    path = write(tmp_path / "reviews.jsonl", rows)
    result = curate(mcq_ws, "import", "reviews", str(path))
    assert result.exit_code == 2, result.output
    for line, field in ((1, "note"), (2, "note"), (3, "note"), (4, "note"), (5, "reason")):
        assert f"{path}:{line}: {field}: {REFUSED}" in result.stderr, result.stderr
    assert count(mcq_ws, ReviewRecord) == 0  # a refused run stores nothing

    rows[0]["note"] = "  a comma splice in the context  "  # kept as given, edges included
    for row in rows[1:4]:
        row["note"] = ""
    path = write(path, rows[:4])
    assert curate(mcq_ws, "import", "reviews", str(path)).exit_code == 0
    with mcq_ws.session() as s:
        notes = {r.payload.get("note") for r in s.execute(select(ReviewRecord)).scalars()}
    assert notes == {"  a comma splice in the context  ", ""}


def test_a_story_revise_note_and_a_drop_reason_of_only_whitespace_are_refused(story_ws, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    with story_ws.session() as s:
        item = s.execute(select(Item).order_by(Item.id)).scalars().first()
        assert item is not None
        item_id, revision = item.id, item.revision
    events = count(story_ws, Event)
    revise = [
        {"item": item_id, "stage": "revise", "reviewer": "rev2", "edits": {"conditions.scene": "a wet road"}},
        {"item": item_id, "stage": "revise", "reviewer": "rev3", "note": BLANKS[2]},
    ]
    path = write(tmp_path / "revise.jsonl", revise)
    result = curate(story_ws, "story", "revise", str(path))
    assert result.exit_code == 2, result.output
    assert f"{path}:2: note: {REFUSED}" in result.stderr
    with story_ws.session() as s:
        assert s.get(Item, item_id).revision == revision  # type: ignore[union-attr]
    assert count(story_ws, Event) == events and count(story_ws, ReviewRecord) == 0

    drop = {"item": item_id, "stage": "filter", "reviewer": "rev1", "verdict": "drop", "reason": "\t \t"}
    path = write(tmp_path / "filter.jsonl", [drop])
    result = curate(story_ws, "import", "reviews", str(path))
    assert result.exit_code == 2 and f"{path}:1: reason: a drop needs a reason" in result.stderr, result.output
    assert count(story_ws, ReviewRecord) == 0

    revise[1]["note"] = "checked against both pages"
    assert curate(story_ws, "story", "revise", str(write(tmp_path / "revise.jsonl", revise))).exit_code == 0
    with story_ws.session() as s:
        assert s.get(Item, item_id).revision == revision + 1  # type: ignore[union-attr]


def test_a_candidate_page_of_only_whitespace_is_refused(workspace: Workspace, corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    lines = [json.loads(x) for x in Path(corpus.candidates).read_text(encoding="utf-8").splitlines()]
    lines[0]["current"]["text"] = " \t "
    lines[2]["next"]["text"] = "\u3000"
    path = corpus.candidates.parent / "blank.jsonl"  # beside the corpus: its media paths stay valid
    write(path, lines)
    result = curate(workspace, "import", "candidates", str(path))
    assert result.exit_code == 2, result.output
    assert f"{path}:1: current.text: holds only whitespace; give the page's narration" in result.stderr
    assert f"{path}:3: next.text: holds only whitespace" in result.stderr
    assert count(workspace, Candidate) == 0

    lines[0]["current"]["text"], lines[2]["next"]["text"] = "", "Kito ran home."  # a page without words is a page
    write(path, lines)
    result = curate(workspace, "import", "candidates", str(path), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["created"] == len(lines)
