"""Recording reviews in a workspace: refusals, replacement, queues, decisions, invalidation by revision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from curation import reviews
from curation.decisions import decide, history
from curation.errors import PermissionDenied, ValidationFailed
from curation.items import import_items
from curation.kinds import stage_inputs
from curation.review_queues import review_queue
from curation.reviews import PendingReview, import_reviews, record_reviews
from curation.schema import GrammarReview
from curation.tables import Event, ReviewRecord
from curation.workflow import derive_status
from curation.workspace import Workspace
from devsupport.reviews import PASSING_EXCLUSIONS
from tests.media_factory import item_row, make_tone, write_items

SETS = {
    "text": ["A", "B"],
    "image": ["A", "C"],
    "audio": ["A", "D"],
    "text+image": ["A", "B"],
    "text+audio": ["A", "C"],
    "image+audio": ["A", "D"],
    "text+image+audio": ["A"],
}


@pytest.fixture
def ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    workspace.add_person("ann1", ["author"])
    workspace.add_person("both", ["author", "reviewer"])
    workspace.add_person("boss", ["maintainer"])
    for r in ("rev1", "rev2", "rev3", "rev4", "rev5", "rev6"):
        workspace.add_person(r, ["reviewer"])
    import_items(
        workspace,
        write_items(
            tmp_path / "items", [item_row("a"), item_row("b", answer="B"), item_row("c", group="g2", author="both")]
        ),
    )
    return workspace


def write_reviews(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def records(ws: Workspace) -> list[ReviewRecord]:
    with ws.session() as s:
        return list(s.scalars(select(ReviewRecord).order_by(ReviewRecord.id)))


def test_refusals_name_line_and_field_and_record_nothing(ws: Workspace, tmp_path: Path) -> None:
    rows = [
        {"item": "a", "stage": "grammar", "reviewer": "rev1", "verdict": "pass"},
        {"item": "c", "stage": "grammar", "reviewer": "both", "verdict": "pass"},
        {"item": "a", "stage": "grammar", "reviewer": "ann1", "verdict": "pass"},
        {"item": "zzz", "stage": "grammar", "reviewer": "rev1", "verdict": "pass"},
        {
            "item": "a",
            "stage": "audio_signoff",
            "reviewer": "rev2",
            "scores": {"naturalness": 6, "clarity": 4, "artefacts": 4},
        },
        {"item": "a", "stage": "subset_checklist", "reviewer": "rev2", "consistent": {**SETS, "audio": ["A", "Q"]}},
        {"item": "a", "stage": "answer_check", "reviewer": "rev3", "answer": "Z"},
        {"item": "a", "stage": "vibes", "reviewer": "rev3"},
        {"group": "g1", "stage": "group_integration", "reviewer": "ghost", "verdict": "pass"},
        {"item": "a", "stage": "subset_checklist", "reviewer": "rev2", "consistent": {"text": ["A"]}},
    ]
    path = write_reviews(tmp_path / "r.jsonl", rows)
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, path)
    text = "\n".join(str(p) for p in exc.value.problems)
    assert f"{path}:5: scores.naturalness: Input should be less than or equal to 5" in text
    assert f"{path}:8: stage: unknown stage 'vibes'" in text
    assert f"{path}:10: consistent: missing view(s)" in text
    assert records(ws) == []
    # the file-level problems fixed, the workspace-level ones are reported
    path = write_reviews(tmp_path / "r2.jsonl", [rows[i] for i in (0, 1, 2, 3, 5, 6, 8)])
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, path)
    text = "\n".join(str(p) for p in exc.value.problems)
    assert f"{path}:2: reviewer: 'both' authored 'c': nobody reviews their own item" in text
    assert f"{path}:3: reviewer: 'ann1' does not have the reviewer role" in text
    assert f"{path}:4: item: unknown item 'zzz'" in text
    assert f"{path}:5: consistent.audio: option(s) Q are not options of 'a'" in text
    assert f"{path}:6: answer: 'Z' is not an option of 'a'" in text
    assert f"{path}:7: reviewer: unknown person 'ghost'" in text
    assert records(ws) == []


def test_identical_record_is_a_no_op_and_a_change_replaces_it(ws: Workspace, tmp_path: Path) -> None:
    row = {"item": "a", "stage": "grammar", "reviewer": "rev1", "verdict": "pass", "note": ""}
    path = write_reviews(tmp_path / "r.jsonl", [row])
    assert import_reviews(ws, path).recorded == 1
    assert import_reviews(ws, path).unchanged == 1
    report = import_reviews(ws, write_reviews(tmp_path / "r2.jsonl", [{**row, "verdict": "fail", "note": "typo"}]))
    assert report.replaced == 1
    assert [r.payload for r in records(ws)] == [{"verdict": "fail", "note": "typo"}]
    replaced = [e for e in ws.events("item:a") if e.action == "review.replaced"]
    assert replaced[0].before["verdict"] == "pass" and replaced[0].after["verdict"] == "fail"
    assert {s.id: s.state for s in derive_status(ws)}["a"] == "returned"


def test_group_reviewer_may_not_have_authored_a_sister(ws: Workspace, tmp_path: Path) -> None:
    path = write_reviews(
        tmp_path / "r.jsonl", [{"group": "g2", "stage": "group_integration", "reviewer": "both", "verdict": "pass"}]
    )
    with pytest.raises(ValidationFailed, match="authored an item of group 'g2'"):
        import_reviews(ws, path)


def test_queue_offers_pending_items_never_own_or_done(ws: Workspace, tmp_path: Path) -> None:
    assert review_queue(ws, "grammar", "rev1") == ["a", "b", "c"]
    assert review_queue(ws, "grammar", "both") == ["a", "b"]
    import_reviews(
        ws,
        write_reviews(tmp_path / "r.jsonl", [{"item": "a", "stage": "grammar", "reviewer": "rev1", "verdict": "pass"}]),
    )
    assert review_queue(ws, "grammar", "rev1") == ["b", "c"]
    assert review_queue(ws, "grammar", "rev2") == ["a", "b", "c"]  # grammar needs a second reviewer
    import_reviews(
        ws,
        write_reviews(tmp_path / "r.jsonl", [{"item": "a", "stage": "grammar", "reviewer": "rev2", "verdict": "pass"}]),
    )
    assert review_queue(ws, "grammar", "rev3") == ["b", "c"]
    assert review_queue(ws, "audio_signoff", "rev3") == ["a"]
    with pytest.raises(PermissionDenied):
        review_queue(ws, "grammar", "ann1")


def full_round(ws: Workspace, tmp_path: Path, item: str, answer: str, name: str) -> None:
    sets = {k: sorted({answer, *v} if k != "text+image+audio" else {answer}) for k, v in SETS.items()}
    if answer != "A":
        sets = {
            k: sorted(set(v) - {"A"} | {answer, "B", "C"}) if k != "text+image+audio" else [answer]
            for k, v in sets.items()
        }
    rows = [{"item": item, "stage": "grammar", "reviewer": r, "verdict": "pass"} for r in ("rev1", "rev5")]
    rows += [
        {
            "item": item,
            "stage": "audio_signoff",
            "reviewer": r,
            "scores": {"naturalness": 4, "clarity": 4, "artefacts": 5},
        }
        for r in ("rev2", "rev3")
    ]
    rows += [
        {"item": item, "stage": "subset_checklist", "reviewer": r, "consistent": sets, "exclusions": PASSING_EXCLUSIONS}
        for r in ("rev1", "rev2", "rev3")
    ]
    rows.append({"item": item, "stage": "answer_check", "reviewer": "rev4", "answer": answer})
    import_reviews(ws, write_reviews(tmp_path / name, rows))


def test_new_audio_invalidates_audio_signoff_and_later_but_a_context_fix_does_not(
    ws: Workspace, tmp_path: Path
) -> None:
    full_round(ws, tmp_path, "a", "A", "ra.jsonl")
    full_round(ws, tmp_path, "b", "B", "rb.jsonl")
    import_reviews(
        ws,
        write_reviews(
            tmp_path / "g.jsonl", [{"group": "g1", "stage": "group_integration", "reviewer": "rev6", "verdict": "pass"}]
        ),
    )
    assert {s.id: s.state for s in derive_status(ws)} == {"a": "admitted", "b": "admitted", "c": "in_review"}
    folder = tmp_path / "items"
    make_tone(folder / "media" / "a-new.wav", freq=880)
    import_items(ws, write_items(folder, [item_row("a", audio="media/a-new.wav")], "edit.jsonl"))
    status = {s.id: s for s in derive_status(ws)}
    assert (status["a"].state, status["a"].stage) == ("in_review", "audio_signoff")
    assert (status["b"].state, status["b"].stage) == ("in_review", "group_integration")  # group review is stale
    fixed = "Sure, that was a really helpful suggestion!"
    import_items(
        ws,
        write_items(
            folder,
            [item_row("a", audio="media/a-new.wav", context=fixed), item_row("b", answer="B", context=fixed)],
            "edit2.jsonl",
        ),
    )
    import_reviews(
        ws,
        write_reviews(
            tmp_path / "a2.jsonl",
            [
                {
                    "item": i,
                    "stage": "audio_signoff",
                    "reviewer": r,
                    "scores": {"naturalness": 5, "clarity": 5, "artefacts": 5},
                }
                for r in ("rev2", "rev3")
                for i in ("a",)
            ],
        ),
    )
    status = {s.id: s for s in derive_status(ws)}
    assert (status["a"].state, status["a"].stage) == ("in_review", "grammar")
    assert (status["b"].state, status["b"].stage) == ("in_review", "grammar")
    with ws.session() as s:
        rows = s.scalars(
            select(ReviewRecord).where(ReviewRecord.subject == "item:b", ReviewRecord.stage == "audio_signoff")
        ).all()
    b = ws.item("b")
    from curation.fact_loading import load_facts

    with ws.session() as s:
        facts = {f.id: f for f in load_facts(s)[0]}
    assert b.revision == 2 and all(r.inputs_hash == stage_inputs(facts["b"], "audio_signoff") for r in rows)


def test_decisions_need_a_maintainer_and_a_reason_and_are_events(ws: Workspace) -> None:
    with pytest.raises(PermissionDenied):
        decide(ws, "a", "rev1", "discard", "dull")
    with pytest.raises(ValidationFailed, match="written reason"):
        decide(ws, "a", "boss", "discard", "  ")
    with pytest.raises(ValidationFailed, match="--stage"):
        decide(ws, "a", "boss", "override", "fine", stage="nope", verdict="pass")
    decide(ws, "a", "boss", "discard", "duplicate of an older item")
    assert {s.id: s.state for s in derive_status(ws)}["a"] == "discarded"
    events = [e for e in history(ws, "a") if e.action == "item.discard"]
    assert events[0].actor == "boss" and events[0].after["reason"] == "duplicate of an older item"


def test_group_review_judges_only_live_sisters(ws: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "items"
    import_items(ws, write_items(folder, [item_row("d", answer="C")], "third.jsonl"))
    for item, answer in (("a", "A"), ("b", "B")):
        full_round(ws, tmp_path, item, answer, f"r{item}.jsonl")
    decide(ws, "d", "boss", "discard", "weak distractors")
    assert review_queue(ws, "group_integration", "rev6") == ["g1"]
    import_reviews(
        ws,
        write_reviews(
            tmp_path / "g.jsonl", [{"group": "g1", "stage": "group_integration", "reviewer": "rev6", "verdict": "pass"}]
        ),
    )
    status = {s.id: s.state for s in derive_status(ws)}
    assert status == {"a": "admitted", "b": "admitted", "c": "in_review", "d": "discarded"}
    assert review_queue(ws, "group_integration", "rev6") == []


def _events(ws: Workspace) -> list[tuple[str, str]]:
    with ws.session() as s:
        rows = s.execute(
            select(Event.action, Event.subject).where(Event.action.startswith("review.")).order_by(Event.id)
        )
        return [tuple(r) for r in rows]


def test_a_record_given_twice_in_one_batch_counts_once(ws: Workspace, tmp_path: Path) -> None:
    """A file refuses two different records of one reviewer, stage and subject (the later would win silently);
    a batch recorded from code (a pull, a page) keeps the later, once, as a replacement."""
    rows = [
        {"item": "a", "stage": "grammar", "reviewer": "rev1", "verdict": "fail", "note": "typo"},
        {"item": "b", "stage": "grammar", "reviewer": "rev1", "verdict": "pass"},
        {"item": "a", "stage": "grammar", "reviewer": "rev1", "verdict": "pass"},  # the reviewer changed their mind
        {"item": "b", "stage": "grammar", "reviewer": "rev1", "verdict": "pass"},  # the same again
    ]
    batch = [PendingReview(n, GrammarReview.model_validate(row)) for n, row in enumerate(rows, 1)]
    report = record_reviews(ws, batch)
    assert (report.recorded, report.replaced, report.unchanged) == (2, 1, 1)
    assert [(r.subject, r.payload["verdict"]) for r in records(ws)] == [("item:a", "pass"), ("item:b", "pass")]
    assert _events(ws) == [("review.recorded", "item:a"), ("review.recorded", "item:b"), ("review.replaced", "item:a")]
    with pytest.raises(ValidationFailed, match="contradicts line 1"):
        import_reviews(ws, write_reviews(tmp_path / "r.jsonl", rows))
    assert len(records(ws)) == 2


def test_a_batch_interrupted_while_writing_records_nothing(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = reviews.insert_rows

    def interrupted(s, table, new_rows):  # type: ignore[no-untyped-def]
        if table is Event:  # the records are written, their events not yet
            raise KeyboardInterrupt
        real(s, table, new_rows)

    monkeypatch.setattr(reviews, "insert_rows", interrupted)
    path = write_reviews(
        tmp_path / "r.jsonl", [{"item": "a", "stage": "grammar", "reviewer": "rev1", "verdict": "pass"}]
    )
    with pytest.raises(KeyboardInterrupt):
        import_reviews(ws, path)
    assert records(ws) == [] and _events(ws) == []
    monkeypatch.undo()
    assert import_reviews(ws, path).recorded == 1
    assert len(records(ws)) == 1 and _events(ws) == [("review.recorded", "item:a")]
