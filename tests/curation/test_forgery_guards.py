"""Issue 22, case 6, on SQLite and PostgreSQL: adjudication only where a checklist is in dispute, never by a
party to it, and the adjudicator is exposed; authorship is history (an author who re-imports an item under
another name stays its author for separation and exposure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.adjudication import adjudication_queue, record_adjudication
from curation.errors import ValidationFailed
from curation.exposure import exposed_people
from curation.items import import_items
from curation.reviews import import_reviews
from curation.workspace import Workspace
from tests.curation.test_adjudication import GOOD, states, write
from tests.curation.test_adjudication import ws as ws  # noqa: F401  (the fixture: a held on a 2-1 split)
from tests.media_factory import item_row, write_items


def _adjudications(ws: Workspace, item: str) -> list[object]:
    return [e for e in ws.events(f"item:{item}") if e.action == "item.adjudicated"]


def test_no_adjudication_without_a_dispute(ws: Workspace) -> None:  # noqa: F811
    assert [d.item for d in adjudication_queue(ws)] == ["a"]  # b's three checklists agree
    with pytest.raises(ValidationFailed, match="'b' has no checklist in dispute"):
        record_adjudication(ws, "b", "maya", "forced through", consistent=GOOD)
    assert not _adjudications(ws, "b")
    with ws.session() as s:
        assert "maya" not in exposed_people(s, "b")


def test_a_party_to_the_dispute_cannot_settle_it(ws: Workspace) -> None:  # noqa: F811
    ws.add_person("l1", ["maintainer"])  # l1 recorded one of a's checklists
    with pytest.raises(ValidationFailed, match="'l1' recorded a checklist of 'a'"):
        record_adjudication(ws, "a", "l1", "mine is right", from_reviewer="l1")
    assert not _adjudications(ws, "a") and states(ws)["a"] == ("held", ["checklist:disagreement"])


def test_the_adjudicator_is_exposed_and_cannot_do_the_blind_check(ws: Workspace, tmp_path: Path) -> None:  # noqa: F811
    record_adjudication(ws, "a", "maya", "B fits the picture", from_reviewer="l1")
    with ws.session() as s:
        assert "maya" in exposed_people(s, "a")
    ws.add_person("maya", ["reviewer"])
    revised = item_row("a", context="Sure, that was a really helpful suggestion, he said.")
    import_items(ws, write_items(tmp_path / "items2", [revised, item_row("b", answer="B")]))  # a fresh blind check
    blind = [{"item": "a", "stage": "answer_check", "reviewer": "maya", "answer": "A"}]
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, write(tmp_path / "blind.jsonl", blind))
    assert "'maya' has seen the label of 'a' (adjudicated the checklist of a)" in str(exc.value)


def test_an_author_renaming_their_item_stays_its_author(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_person("ann1", ["author", "reviewer"])
    workspace.add_person("ann2", ["author"])
    import_items(workspace, write_items(tmp_path / "v1", [item_row("x", author="ann1")]))
    import_items(workspace, write_items(tmp_path / "v2", [item_row("x", author="ann2")]))  # re-imported as ann2
    assert workspace.item("x").author == "ann2" and workspace.item("x").revision == 2
    with workspace.session() as s:
        assert {"ann1", "ann2"} <= exposed_people(s, "x")
    for stage, extra in (("grammar", {"verdict": "pass"}), ("answer_check", {"answer": "A"})):
        row = {"item": "x", "stage": stage, "reviewer": "ann1", **extra}
        with pytest.raises(ValidationFailed) as exc:
            import_reviews(workspace, write(tmp_path / f"{stage}.jsonl", [row]))
        assert "'ann1' authored 'x': nobody reviews their own item" in str(exc.value)
