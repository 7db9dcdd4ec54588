"""A team at once (design.md, "Work distribution"), on SQLite and PostgreSQL: people on one queue are offered
different entries, concurrent submissions never store more records than a stage's quorum, queues plan staffing
(TRIAD's pool of five in any order of D and E opening their pages), and people's languages and qualifications.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from curation.derived import load_derived
from curation.errors import ValidationFailed
from curation.reservations import claim_open, holders, live, release, renew
from curation.review_queues import queue_report, wanted
from curation.reviews import PendingReview, record_reviews
from curation.schema import REVIEW_MODELS
from curation.tables import ReviewRecord, utcnow
from curation.work_tables import Reservation
from curation.workflow import derive_status
from curation.workspace import Workspace
from devsupport.ui_team import build_team_workspace, team_names
from tests.curation.test_pool_of_five import ITEMS, POOL, group_review, letters, pool_workspace, reviews


def pending(record: dict[str, Any]) -> PendingReview:
    return PendingReview(0, REVIEW_MODELS[record["stage"]].model_validate(record))  # type: ignore[arg-type]


def offer(ws: Workspace, stage: str, person: str) -> str | None:
    """What a page does when PERSON opens STAGE: the queue, then a reservation of its first free entry."""
    state = load_derived(ws)
    report = queue_report(ws, stage, person, state)
    taken = claim_open(ws, stage, person, wanted(state, stage, report.offered)).chosen
    return None if taken is None else taken.partition(":")[2]


def submit_at_once(ws: Workspace, records: list[dict[str, Any]]) -> list[str]:
    """Each record submitted from its own thread and workspace handle (as app processes do), released together;
    returns each one's outcome: "recorded" or the refusal's message."""
    barrier = threading.Barrier(len(records))
    outcomes: list[str] = [""] * len(records)

    def submit(k: int) -> None:
        handle = Workspace.open(ws.root)
        try:
            barrier.wait()
            record_reviews(handle, [pending(records[k])], source="ui", needed_only=True)
            outcomes[k] = "recorded"
        except ValidationFailed as exc:
            outcomes[k] = exc.problems[0].message
        finally:
            handle.close()

    threads = [threading.Thread(target=submit, args=(k,)) for k in range(len(records))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return outcomes


def test_people_on_one_queue_are_offered_different_items(workspace: Workspace, tmp_path: Path) -> None:
    build_team_workspace(workspace, tmp_path / "src", items=6, people=4)
    got = [offer(workspace, "answer_check", name) for name in team_names(4)]
    assert None not in got and len(set(got)) == 4
    # each holds one entry per stage: opening the page again keeps the same one
    assert [offer(workspace, "answer_check", name) for name in team_names(4)] == got
    # two more people than free items: the last gets nothing until someone lets go
    workspace.add_person("t05", ["reviewer"])
    workspace.add_person("t06", ["reviewer"])
    workspace.add_person("t07", ["reviewer"])
    assert offer(workspace, "answer_check", "t05") is not None
    assert offer(workspace, "answer_check", "t06") is not None
    assert offer(workspace, "answer_check", "t07") is None
    assert release(workspace, "t01", "answer_check") == 1
    assert offer(workspace, "answer_check", "t07") == got[0]


def test_a_stage_of_quorum_q_has_at_most_q_live_reservations(workspace: Workspace, tmp_path: Path) -> None:
    """Grammar takes two sign-offs: unreserved items go first, then each item to a second person, never a third;
    a stored record releases its reviewer's reservation and leaves room for one more person only."""
    build_team_workspace(workspace, tmp_path / "src", items=2, people=5)
    with workspace.writing() as s:  # back to grammar: drop every stored record
        s.execute(ReviewRecord.__table__.delete())  # type: ignore[attr-defined]
    got = [offer(workspace, "grammar", name) for name in team_names(5)]
    assert got == ["g000-a", "g000-b", "g000-a", "g000-b", None]
    assert {h.person for h in live(workspace, "grammar") if h.subject == "item:g000-a"} == {"t01", "t03"}
    record = {"item": "g000-a", "stage": "grammar", "reviewer": "t01", "verdict": "pass"}
    record_reviews(workspace, [pending(record)], source="ui", needed_only=True)
    assert holders(workspace, "grammar")["item:g000-a"] == {"t03"}  # the record released t01's
    assert offer(workspace, "grammar", "t05") is None  # one record and t03's reservation: the quorum of 2


def test_a_lease_expires_and_renewing_keeps_it(workspace: Workspace, tmp_path: Path) -> None:
    build_team_workspace(workspace, tmp_path / "src", items=1, people=2)
    got = offer(workspace, "answer_check", "t01")
    assert got is not None and offer(workspace, "answer_check", "t02") is None
    assert renew(workspace, "answer_check", "t01", f"item:{got}")
    (fresh,) = live(workspace, "answer_check")
    assert renew(workspace, "answer_check", "t01", f"item:{got}") and live(workspace, "answer_check") == [fresh]
    with workspace.writing() as s:  # under half a lease left: the next renewal extends it by a whole lease
        s.execute(update(Reservation).values(expires_at=utcnow() + timedelta(seconds=10)))
    assert renew(workspace, "answer_check", "t01", f"item:{got}")
    (renewed,) = live(workspace, "answer_check")
    assert renewed.expires_at > utcnow() + timedelta(minutes=4)  # the default lease is 5 minutes
    with workspace.writing() as s:
        s.execute(update(Reservation).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert not renew(workspace, "answer_check", "t01", f"item:{got}")  # gone: the page claims again
    assert offer(workspace, "answer_check", "t02") == got
    with workspace.session() as s:
        assert [r.person for r in s.scalars(select(Reservation))] == ["t02"]


@pytest.mark.parametrize("people", [2, 8])
def test_concurrent_blind_checks_store_one_record_and_tell_the_others_nothing_of_it(
    workspace: Workspace, tmp_path: Path, people: int
) -> None:
    build_team_workspace(workspace, tmp_path / "src", items=2, people=people)
    answers = ["A", "B"] * people
    records = [
        {"item": "g000-a", "stage": "answer_check", "reviewer": name, "answer": answers[k]}
        for k, name in enumerate(team_names(people))
    ]
    outcomes = submit_at_once(workspace, records)
    assert outcomes.count("recorded") == 1
    with workspace.session() as s:
        stored = list(s.scalars(select(ReviewRecord).where(ReviewRecord.stage == "answer_check")))
    assert len(stored) == 1
    winner = stored[0].reviewer
    for k, outcome in enumerate(outcomes):
        if outcome == "recorded":
            assert records[k]["reviewer"] == winner
            continue
        assert outcome.startswith("no_longer_needed:answer_check: g000-a no longer needs your answer_check")
        assert winner not in outcome and "answer_check_disagrees" not in outcome
        assert "returned" not in outcome and "admitted" not in outcome


def test_concurrent_grammar_sign_offs_stop_at_the_quorum_and_an_import_takes_every_record(
    workspace: Workspace, tmp_path: Path
) -> None:
    build_team_workspace(workspace, tmp_path / "src", items=2, people=5)
    with workspace.writing() as s:
        s.execute(ReviewRecord.__table__.delete())  # type: ignore[attr-defined]
    records = [{"item": "g000-b", "stage": "grammar", "reviewer": n, "verdict": "pass"} for n in team_names(5)]
    outcomes = submit_at_once(workspace, records)
    assert outcomes.count("recorded") == 2
    with workspace.session() as s:
        stored = s.scalars(select(ReviewRecord).where(ReviewRecord.subject == "item:g000-b")).all()
    assert len(stored) == 2
    # a winner may still change their own record; an import (not a person's page) takes a third
    winner = stored[0].reviewer
    change = {"item": "g000-b", "stage": "grammar", "reviewer": winner, "verdict": "fail"}
    assert record_reviews(workspace, [pending(change)], source="ui", needed_only=True).replaced == 1
    loser = next(n for n in team_names(5) if n not in {r.reviewer for r in stored})
    third = {"item": "g000-b", "stage": "grammar", "reviewer": loser, "verdict": "pass"}
    assert record_reviews(workspace, [pending(third)]).recorded == 1


@pytest.mark.parametrize("d_first", [True, False], ids=["D-opens-first", "E-opens-first"])
def test_a_pool_of_five_admits_its_items_whatever_the_order_d_and_e_open_the_blind_check(
    workspace: Workspace, tmp_path: Path, d_first: bool
) -> None:
    """Up to the blind check, by the book; then D and E both open the blind check page, in either order, and
    each submits whatever the page offered them; then group integration the same way. Every item is admitted,
    and E was never offered a blind check (taking one would leave nobody for group integration)."""
    cli = pool_workspace(workspace, tmp_path)
    rows = [r for item, (answer, _, author) in ITEMS.items() for r in reviews(item, answer, letters(author), "CB")]
    assert cli.import_reviews([r for r in rows if r["stage"] != "answer_check"]).exit_code == 0
    answer_of = {item: answer for item, (answer, _, _) in ITEMS.items()}
    for _round in range(4):
        order = ["p4", "p5"] if d_first else ["p5", "p4"]
        for person in [*order, "p1", "p2", "p3"]:
            got = offer(workspace, "answer_check", person)
            if got is None:
                continue
            assert letters(ITEMS[got][2])["D"] == person, (got, person)
            record = {"item": got, "stage": "answer_check", "reviewer": person, "answer": answer_of[got]}
            record_reviews(workspace, [pending(record)], source="ui", needed_only=True)
    status = {st.id: st for st in derive_status(workspace)}
    assert {i: (s.state, s.stage) for i, s in status.items()} == dict.fromkeys(
        ITEMS, ("in_review", "group_integration")
    )
    assert not any(r.startswith("staffing:") for st in status.values() for r in st.reasons)
    assert cli.import_reviews([group_review("g1", letters("p1")), group_review("g2", letters("p2"))]).exit_code == 0
    assert {st.id: st.state for st in derive_status(workspace)} == dict.fromkeys(ITEMS, "admitted")


def test_the_queue_says_why_it_keeps_an_item_from_someone(workspace: Workspace, tmp_path: Path) -> None:
    cli = pool_workspace(workspace, tmp_path)
    rows = [r for r in reviews("a", "A", letters("p1"), "CB") if r["stage"] != "answer_check"]
    assert cli.import_reviews(rows).exit_code == 0
    e = letters("p1")["E"]
    report = queue_report(workspace, "answer_check", e)
    assert "a" not in report.offered
    assert report.withheld["a"].startswith("staffing:answer_check: if p5 took it, nobody left could do its ")
    assert "group_integration" in report.withheld["a"]
    result = cli("review", "queue", "answer_check", "--reviewer", e, "--why")
    assert result.exit_code == 0 and "not offered: a: staffing:answer_check" in result.stderr


def test_queues_offer_items_only_to_people_who_read_their_language(workspace: Workspace, tmp_path: Path) -> None:
    build_team_workspace(workspace, tmp_path / "src", items=8, people=3)  # items 2, 3, 6, 7 are in Chinese
    zh = {"g001-a", "g001-b", "g003-a", "g003-b"}
    before = set(queue_report(workspace, "answer_check", "t01").offered)
    assert zh <= before  # nobody set languages: everyone is offered everything, as before
    workspace.set_abilities("t01", ["en"])
    workspace.set_abilities("t02", ["zh,en"])
    t01 = queue_report(workspace, "answer_check", "t01")
    assert set(t01.offered) == before - zh
    assert set(t01.withheld) == zh and all(w.startswith("language_not_read:zh: ") for w in t01.withheld.values())
    assert set(queue_report(workspace, "answer_check", "t02").offered) == before
    assert set(queue_report(workspace, "answer_check", "t03").offered) == before  # t03 set none: reads any


def test_a_stage_someone_is_qualified_for_goes_only_to_the_qualified(workspace: Workspace, tmp_path: Path) -> None:
    build_team_workspace(workspace, tmp_path / "src", items=2, people=3)
    workspace.set_abilities("t02", can=["answer_check"])
    assert queue_report(workspace, "answer_check", "t01").offered == []
    assert (
        queue_report(workspace, "answer_check", "t01")
        .withheld["g000-a"]
        .startswith("qualification:answer_check: only people qualified for answer_check take it (t02)")
    )
    assert queue_report(workspace, "answer_check", "t02").offered == ["g000-a", "g000-b"]
    workspace.set_abilities("t02", can=[])
    assert queue_report(workspace, "answer_check", "t01").offered == ["g000-a", "g000-b"]


def test_staffing_knows_who_reads_chinese(workspace: Workspace, tmp_path: Path) -> None:
    """A pool of five where only the author reads Chinese: its Chinese items cannot be staffed, and status
    says so; once the four others read Chinese too, nothing is short."""
    cli = pool_workspace(workspace, tmp_path)
    for person in POOL:
        workspace.set_abilities(person, ["en"])
    with workspace.writing() as s:
        from curation.tables import Item

        s.execute(update(Item).where(Item.group_id == "g2").values(language="zh"))
    status = cli.status()
    assert all("staffing:grammar" in status[i]["reasons"] for i in ("c", "d"))
    gaps = load_derived(workspace).staffing
    assert gaps["c"].advice().startswith("add 4 reviewers who read zh")
    assert not any(r.startswith("staffing:") for i in ("a", "b") for r in status[i]["reasons"])
    for person in POOL:
        workspace.set_abilities(person, ["en", "zh"])
    assert not any(r.startswith("staffing:") for st in cli.status().values() for r in st["reasons"])
