"""Blind means blind, in the domain: TRIAD's separation of roles and exposure, on SQLite and PostgreSQL.

Table-driven: each case records some reviews, then imports one file and expects it refused (whole file, the rule
named on the right line) or recorded; queues and the derivation follow the same rules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from curation.blind_checks import blind_checks_given_up
from curation.config import CONFIG_NAME
from curation.derived import load_derived
from curation.errors import ValidationFailed
from curation.exposure import exposed_items, record_exposure, reveal
from curation.items import import_items
from curation.review_queues import review_queue
from curation.reviews import import_reviews
from curation.tables import ReviewRecord
from curation.workflow import derive_status
from curation.workspace import Workspace
from devsupport.reviews import PASSING_EXCLUSIONS, consistent_sets
from tests.media_factory import item_row, write_items

PEOPLE = ("rev1", "rev2", "rev3", "rev4", "rev5", "rev6", "rev7")


def grammar(item: str, who: str) -> dict[str, Any]:
    return {"item": item, "stage": "grammar", "reviewer": who, "verdict": "pass"}


def audio(item: str, who: str) -> dict[str, Any]:
    return {"item": item, "stage": "audio_signoff", "reviewer": who, "scores": dict.fromkeys(AXES, 4)}


def checklist(item: str, who: str) -> dict[str, Any]:
    sets = consistent_sets(ANSWER[item])
    return {
        "item": item,
        "stage": "subset_checklist",
        "reviewer": who,
        "consistent": sets,
        "exclusions": PASSING_EXCLUSIONS,
    }


def blind(item: str, who: str, answer: str | None = None) -> dict[str, Any]:
    return {"item": item, "stage": "answer_check", "reviewer": who, "answer": answer or ANSWER[item]}


def group(who: str, verdict: str = "pass") -> dict[str, Any]:
    return {"group": "g1", "stage": "group_integration", "reviewer": who, "verdict": verdict}


AXES = ("naturalness", "clarity", "artefacts")
ANSWER = {"a": "A", "b": "B", "c": "A"}


@pytest.fixture
def ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    workspace.add_person("ann1", ["author"])
    workspace.add_person("ann2", ["author", "reviewer"])
    for name in PEOPLE:
        workspace.add_person(name, ["reviewer"])
    rows = [item_row("a"), item_row("b", answer="B", author="ann2"), item_row("c", group="g2")]
    import_items(workspace, write_items(tmp_path / "items", rows))
    return workspace


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def count_records(ws: Workspace) -> int:
    with ws.session() as s:
        return len(s.execute(select(ReviewRecord.id)).all())


def through_answer_check(ws: Workspace, folder: Path, items: tuple[str, ...] = ("a", "b")) -> None:
    """TRIAD's people: grammar rev1, rev2; listeners rev3, rev4; checklist rev1, rev3, rev5; blind rev5."""
    rows: list[dict[str, Any]] = []
    for item in items:
        rows += [grammar(item, "rev1"), grammar(item, "rev2"), audio(item, "rev3"), audio(item, "rev4")]
        rows += [checklist(item, w) for w in ("rev1", "rev3", "rev5")] + [blind(item, "rev5")]
    import_reviews(ws, write(folder / f"through-{'-'.join(items)}.jsonl", rows))


CASES = [
    # (name, recorded before, the file imported, refused line and rule (None: recorded))
    ("B then C: first of both", [grammar("a", "rev1")], [audio("a", "rev1")], (1, "first grammar reviewer (B)")),
    ("C then B: first of both", [audio("a", "rev1")], [grammar("a", "rev1")], (1, "first audio listener (C)")),
    ("B gives the second listener sign-off", [grammar("a", "rev1"), audio("a", "rev2")], [audio("a", "rev1")], None),
    ("C gives the second grammar sign-off", [audio("a", "rev1"), grammar("a", "rev2")], [grammar("a", "rev1")], None),
    ("one file, B first at both", [], [grammar("a", "rev1"), audio("a", "rev1"), audio("a", "rev2")], (2, "first")),
    ("one file, B second listener", [], [grammar("a", "rev1"), audio("a", "rev2"), audio("a", "rev1")], None),
    ("B then D", [grammar("a", "rev1")], [blind("a", "rev1")], (1, "separation:triad")),
    ("C then D", [audio("a", "rev1")], [blind("a", "rev1")], (1, "separation:triad")),
    ("D then B", [blind("a", "rev1")], [grammar("a", "rev1")], (1, "separation:triad")),
    ("B then checklist", [grammar("a", "rev1")], [checklist("a", "rev1")], None),
    ("C then checklist", [audio("a", "rev1")], [checklist("a", "rev1")], None),
    ("checklist then D", [checklist("a", "rev1")], [blind("a", "rev1")], None),
    ("checklist then B", [checklist("a", "rev1")], [grammar("a", "rev1")], None),
    ("B, checklist, then D", [grammar("a", "rev1"), checklist("a", "rev1")], [blind("a", "rev1")], (1, "triad")),
    ("E then checklist", [group("rev1")], [checklist("a", "rev1")], (1, "separation:triad")),
    ("checklist then E", [checklist("b", "rev1")], [group("rev1")], (1, "separation:triad")),
    ("B on a sister then E", [grammar("b", "rev1")], [group("rev1")], None),
    ("C on a sister then E", [audio("b", "rev1")], [group("rev1")], None),
    ("E then a second grammar sign-off", [grammar("a", "rev2"), group("rev1")], [grammar("a", "rev1")], None),
    ("E then a second listener", [audio("a", "rev2"), group("rev1")], [audio("a", "rev1")], None),
    ("B, checklist, then E", [grammar("a", "rev1"), checklist("a", "rev1")], [group("rev1")], (1, "neither")),
    ("D on a sister then E", [blind("b", "rev1")], [group("rev1")], (1, "blind answer checker (D)")),
    (
        "C then D on b, in words",
        [audio("b", "rev1")],
        [blind("b", "rev1")],
        (1, "holds no role on the item but the subset"),
    ),
    ("B on another group's item, then E", [grammar("c", "rev1")], [group("rev1")], None),
    ("E then D", [group("rev1")], [blind("a", "rev1")], (1, "separation:triad")),
    ("the author reviews", [], [grammar("b", "ann2")], (1, "'ann2' authored 'b'")),
    ("a sister's author does grammar", [], [grammar("a", "ann2")], None),
    ("a sister's author checks blind", [], [blind("a", "ann2")], (1, "exposed:author")),
    ("a sister's author reviews the group", [], [group("ann2")], (1, "authored an item of group 'g1'")),
    (
        "one file, B on line 1, D on line 3",
        [],
        [grammar("a", "rev1"), grammar("b", "rev2"), blind("a", "rev1")],
        (3, "triad"),
    ),
    ("one file, D on line 1, B on line 2", [], [blind("a", "rev1"), grammar("a", "rev1")], (2, "triad")),
    (
        "one file, distinct people",
        [],
        [grammar("a", "rev1"), audio("a", "rev2"), blind("a", "rev3"), group("rev4")],
        None,
    ),
]


@pytest.mark.parametrize(("name", "before", "rows", "refused"), CASES, ids=[c[0] for c in CASES])
def test_triad_separation_at_import(
    ws: Workspace, tmp_path: Path, name: str, before: list[dict[str, Any]], rows: list[dict[str, Any]], refused: Any
) -> None:
    if before:
        import_reviews(ws, write(tmp_path / "before.jsonl", before))
    stored = count_records(ws)
    path = write(tmp_path / "file.jsonl", rows)
    if refused is None:
        assert import_reviews(ws, path).recorded == len(rows)
        return
    line, rule = refused
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, path)
    assert [(p.line, p.field) for p in exc.value.problems] == [(line, "reviewer")]
    assert rule in exc.value.problems[0].message
    assert str(path) in str(exc.value.problems[0])
    assert count_records(ws) == stored, "a refused file records nothing"


RELAXED = [
    ("B then C", [grammar("a", "rev1")], [audio("a", "rev1")], None),
    ("B then D", [grammar("a", "rev1")], [blind("a", "rev1")], None),
    ("E then D: still exposed", [group("rev1")], [blind("a", "rev1")], (1, "exposed:group_review")),
    ("one file, E on line 1, D on line 2", [], [group("rev1"), blind("a", "rev1")], (2, "exposed:group_review")),
    ("one file, D on line 1, E on line 2", [], [blind("a", "rev1"), group("rev1")], None),
    ("the author reviews", [], [grammar("b", "ann2")], (1, "'ann2' authored 'b'")),
]


@pytest.mark.parametrize(("name", "before", "rows", "refused"), RELAXED, ids=[c[0] for c in RELAXED])
def test_author_only_keeps_authorship_and_exposure(
    ws: Workspace, tmp_path: Path, name: str, before: list[dict[str, Any]], rows: list[dict[str, Any]], refused: Any
) -> None:
    ws.settings.review.separation = "author_only"
    test_triad_separation_at_import(ws, tmp_path, name, before, rows, refused)


def test_separation_is_read_from_curate_toml(ws: Workspace) -> None:
    text = (ws.root / CONFIG_NAME).read_text()
    assert 'separation = "triad"' in text, "a new workspace writes the default out"
    (ws.root / CONFIG_NAME).write_text(text.replace('separation = "triad"', 'separation = "author_only"'))
    assert Workspace.open(ws.root).settings.review.separation == "author_only"


def test_an_exposed_reviewer_is_refused_the_blind_check_and_never_offered_it(ws: Workspace, tmp_path: Path) -> None:
    rows = [grammar(i, w) for i in ("a", "b") for w in ("rev1", "rev2")] + [
        audio(i, w) for i in "ab" for w in ("rev3", "rev4")
    ]
    rows += [checklist(i, w) for i in "ab" for w in ("rev1", "rev3", "rev5")]
    import_reviews(ws, write(tmp_path / "first.jsonl", rows))
    assert review_queue(ws, "answer_check", "rev6") == ["a", "b"]
    assert review_queue(ws, "answer_check", "ann2") == [], "the author of b knows a's label too (sisters)"
    with ws.writing() as s:
        record_exposure(s, "ui", ["rev6"], ["a"], "page author g1")
    assert review_queue(ws, "answer_check", "rev6") == ["b"]
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, write(tmp_path / "blind.jsonl", [blind("b", "rev6"), blind("a", "rev6")]))
    (problem,) = exc.value.problems
    assert problem.line == 2 and problem.message.startswith("exposed:shown: 'rev6' has seen the label of 'a'")
    assert "page author g1" in problem.message

    # a blind answer given before the exposure stays; the same record again is a no-op; a changed one is refused
    import_reviews(ws, write(tmp_path / "rev7.jsonl", [blind("a", "rev7")]))
    reveal(ws, "rev7", ["a"], "page history")
    assert import_reviews(ws, write(tmp_path / "again.jsonl", [blind("a", "rev7")])).unchanged == 1
    with pytest.raises(ValidationFailed, match="exposed:shown"):
        import_reviews(ws, write(tmp_path / "changed.jsonl", [blind("a", "rev7", answer="C")]))
    assert {st.id: st.stage for st in derive_status(ws)}["a"] == "group_integration"


def test_group_integration_opens_when_every_sister_passed_its_blind_check(ws: Workspace, tmp_path: Path) -> None:
    through_answer_check(ws, tmp_path, ("a",))
    state = {st.id: (st.state, st.stage) for st in derive_status(ws)}
    assert state["a"] == ("in_review", "group_integration") and state["b"] == ("in_review", "grammar")
    assert review_queue(ws, "group_integration", "rev6") == [], "b has not passed its answer check"
    assert load_derived(ws).open_groups() == []
    import_reviews(ws, write(tmp_path / "early.jsonl", [group("rev6")]))  # accepted at any time, counts from then on
    through_answer_check(ws, tmp_path, ("b",))
    assert {st.id: st.state for st in derive_status(ws) if st.group == "g1"} == {"a": "admitted", "b": "admitted"}
    assert review_queue(ws, "group_integration", "rev7") == []  # done: nothing open any more


def test_the_open_group_is_offered_to_nobody_who_is_d_or_a_checklist_reviewer(ws: Workspace, tmp_path: Path) -> None:
    through_answer_check(ws, tmp_path)
    assert load_derived(ws).open_groups() == ["g1"]
    offered = {who: review_queue(ws, "group_integration", who) for who in (*PEOPLE, "ann2")}
    assert offered == {
        "rev1": [],  # grammar and checklist
        "rev2": ["g1"],  # grammar only: E may give a second sign-off
        "rev3": [],  # listener and checklist
        "rev4": ["g1"],
        "rev5": [],
        "rev6": ["g1"],
        "rev7": ["g1"],
        "ann2": [],
    }
    ws.settings.review.separation = "author_only"
    assert review_queue(ws, "group_integration", "rev1") == ["g1"]


def test_the_derivation_ignores_a_record_that_breaks_separation(ws: Workspace, tmp_path: Path) -> None:
    ws.settings.review.separation = "author_only"
    rows = [grammar(i, w) for i in ("a", "b") for w in ("rev1", "rev2")] + [
        audio(i, w) for i in "ab" for w in ("rev3", "rev4")
    ]
    rows += [checklist(i, w) for i in "ab" for w in ("rev1", "rev3", "rev5")]
    rows += [blind("a", "rev1"), blind("b", "rev5")]  # rev1: grammar first, then a blind check (TRIAD says no)
    import_reviews(ws, write(tmp_path / "loose.jsonl", rows))
    assert {st.id: st.stage for st in derive_status(ws)}["a"] == "group_integration"
    ws.settings.review.separation = "triad"
    assert {st.id: st.stage for st in derive_status(ws)}["a"] == "answer_check", "rev1's blind check no longer counts"
    assert [r.reviewer for r in load_derived(ws).records("a", "grammar")] == ["rev1", "rev2"], "the first role stays"
    assert review_queue(ws, "answer_check", "rev1") == []
    assert review_queue(ws, "answer_check", "rev6") == ["a"]


def test_blind_checks_given_up_counts_what_the_viewer_could_still_check(ws: Workspace, tmp_path: Path) -> None:
    rows = [grammar(i, w) for i in ("a", "b") for w in ("rev1", "rev2")]
    import_reviews(ws, write(tmp_path / "g.jsonl", rows))
    state = load_derived(ws)
    assert blind_checks_given_up(ws, state, "rev6", ["a", "b", "c"]) == ["a", "b", "c"]
    assert blind_checks_given_up(ws, state, "rev1", ["a", "b", "c"]) == ["c"], "rev1 is a's and b's grammar reviewer"
    assert blind_checks_given_up(ws, state, "ann1", ["a", "b"]) == [], "not a reviewer"
    reveal(ws, "rev6", ["a"], "page author g1")
    assert blind_checks_given_up(ws, load_derived(ws), "rev6", ["a", "b"]) == ["b"]


def test_an_export_or_history_read_by_a_named_person_exposes_them(ws: Workspace, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from omnicurate.cli.main import app

    def curate(*args: str) -> Any:
        return CliRunner().invoke(app, ["-w", str(ws.root), *args])

    refused = curate("export", "items", str(tmp_path / "ghost"), "--by", "ghost")
    assert refused.exit_code == 2 and "no person named 'ghost'" in refused.output
    assert not (tmp_path / "ghost").exists(), "nothing written for an unknown reader"
    assert curate("export", "items", str(tmp_path / "out.jsonl")).exit_code == 0  # nobody named: nothing recorded
    with ws.session() as s:
        assert exposed_items(s, "rev6", ["a", "b", "c"]) == set()
    assert curate("export", "items", str(tmp_path / "out.jsonl"), "--by", "rev6").exit_code == 0
    assert curate("history", "c", "--by", "rev7", "--json").exit_code == 0
    with ws.session() as s:
        assert exposed_items(s, "rev6", ["a", "b", "c"]) == {"a", "b", "c"}
        assert exposed_items(s, "rev7", ["a", "b", "c"]) == {"c"}
