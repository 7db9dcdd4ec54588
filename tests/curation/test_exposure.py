"""Exposure: who knows an item's label (authorship of a sister, a group review, recorded events)."""

from __future__ import annotations

import json
from pathlib import Path

from curation.decisions import history
from curation.exposure import AUTHORED, EXPOSED, GROUP_REVIEW, exposed_people, exposures, record_exposure
from curation.items import import_items
from curation.reviews import Withdrawal, import_reviews, withdraw_reviews
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items


def _workspace(ws: Workspace, folder: Path) -> None:
    for name, roles in (("ann1", ["author"]), ("ann2", ["author"]), ("rev1", ["reviewer"]), ("rev2", ["reviewer"])):
        ws.add_person(name, roles)
    rows = [item_row("a", group="g1"), item_row("b", group="g1", answer="B", author="ann2"), item_row("c", group="g2")]
    import_items(ws, write_items(folder, rows))


def test_exposures_come_from_authorship_group_reviews_and_recorded_events(workspace: Workspace, tmp_path: Path) -> None:
    _workspace(workspace, tmp_path / "in")
    with workspace.session() as s:
        assert exposed_people(s, "a") == {"ann1", "ann2"}, "authors of sisters know the label"
        assert exposed_people(s, "c") == {"ann1"}
    with workspace.writing() as s:
        assert record_exposure(s, "labelstudio", ["rev1", "rev2"], ["a", "b"], "project 3 task 9") == 4
    with workspace.writing() as s:
        assert record_exposure(s, "labelstudio", ["rev1"], ["a"], "project 3 task 9") == 0, "idempotent"
        assert record_exposure(s, "labelstudio", ["rev1"], ["a"], "release 1.0 card") == 1
    reviews = tmp_path / "group.jsonl"
    reviews.write_text(json.dumps({"group": "g2", "stage": "group_integration", "reviewer": "rev2", "verdict": "pass"}))
    import_reviews(workspace, reviews)
    with workspace.session() as s:
        found = exposures(s)
        assert exposed_people(s, "a") == {"ann1", "ann2", "rev1", "rev2"}
        assert exposed_people(s, "c") == {"ann1", "rev2"}
    assert [(e.person, e.via) for e in found["c"]] == [("ann1", AUTHORED), ("rev2", GROUP_REVIEW)]
    assert [(e.person, e.via) for e in found["a"] if e.at is not None] == [
        ("rev1", "project 3 task 9"),
        ("rev2", "project 3 task 9"),
        ("rev1", "release 1.0 card"),
    ]
    shown = [e for e in history(workspace, "a") if e.action == EXPOSED]
    assert [(e.after["person"], e.actor) for e in shown] == [
        ("rev1", "labelstudio"),
        ("rev2", "labelstudio"),
        ("rev1", "labelstudio"),
    ]


def test_withdrawing_removes_only_what_the_source_recorded(workspace: Workspace, tmp_path: Path) -> None:
    _workspace(workspace, tmp_path / "in")
    line = {"item": "a", "stage": "grammar", "reviewer": "rev1", "verdict": "pass"}
    (tmp_path / "r.jsonl").write_text(json.dumps(line))
    import_reviews(workspace, tmp_path / "r.jsonl")
    with workspace.session() as s:
        from sqlalchemy import select

        from curation.tables import ReviewRecord

        rec = s.execute(select(ReviewRecord)).scalar_one()
    slot = Withdrawal("item:a", "grammar", "rev1", rec.inputs_hash, "its annotation was deleted")
    assert withdraw_reviews(workspace, [slot], "labelstudio") == 0, "an imported record is not Label Studio's"
    assert withdraw_reviews(workspace, [slot], "import") == 1
    (event,) = [e for e in history(workspace, "a") if e.action == "review.withdrawn"]
    assert (event.before["verdict"], event.after["reason"]) == ("pass", "its annotation was deleted")
    assert withdraw_reviews(workspace, [slot], "import") == 0
