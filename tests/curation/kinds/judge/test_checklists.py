"""Checklist drafts, curation within bounds, blind cross-check, agreement and adjudication."""

from __future__ import annotations

import pytest

from curation.errors import ValidationFailed
from curation.kinds.judge.checklists import (
    ChecklistBounds,
    adjudication_queue,
    apply_curation,
    check_adjudication,
    check_crosscheck,
    drafted_entries,
    resolve_task,
    rubric_counts,
    selection_agreement,
)
from curation.kinds.judge.rubrics import RUBRICS
from curation.kinds.judge.schema import (
    ChecklistAdjudicationRecord,
    ChecklistDraft,
    ChecklistEntry,
    ChecklistSelectionRecord,
    ModelProvenance,
    PersonProvenance,
)

PROMPT = "ab" * 32
DRAFT = ChecklistDraft(
    checklist={
        "relevance": ["Does the video show a bell?", "Is the bell rung?"],
        "creativity": ["Is the framing inventive?"],
        "clarity": ["Is the bell clearly visible?", "Is the bell clearly visible?"],  # drafted twice: one entry
    }
)


def entries(task="t1"):
    return drafted_entries(task, DRAFT, "gemini-replay", PROMPT)


def select(task, stage, who, selected, **extra):
    return ChecklistSelectionRecord(task=task, stage=stage, reviewer=who, selected=selected, **extra)


def test_drafts_keep_the_model_and_prompt_and_are_stable():
    drafted = entries()
    assert [e.rubric for e in drafted] == ["relevance", "relevance", "creativity", "clarity"]
    assert all(e.provenance == ModelProvenance(model="gemini-replay", prompt_sha256=PROMPT) for e in drafted)
    assert [e.id for e in drafted] == [e.id for e in entries()]  # same words, same ids
    assert {e.id for e in drafted}.isdisjoint({e.id for e in entries("t2")})


def test_curation_respects_bounds_and_records_edits_and_additions_as_the_persons():
    drafted = entries()
    ids = [e.id for e in drafted]
    with pytest.raises(ValidationFailed, match="clarity: 0 entries chosen; select 1 to 6 per rubric"):
        apply_curation(drafted, select("t1", "checklist_curation", "ann1", ids[:3]))
    with pytest.raises(ValidationFailed, match="relevance: 2 entries chosen; select 1 to 1 per rubric") as refused:
        apply_curation(drafted, select("t1", "checklist_curation", "ann1", ids), ChecklistBounds(1, 1))
    assert len(refused.value.problems) == 1, "the rubrics within bounds are not named"
    with pytest.raises(ValidationFailed, match="unknown entry 'nope'"):
        apply_curation(drafted, select("t1", "checklist_curation", "ann1", ["nope"]))
    record = select(
        "t1", "checklist_curation", "ann1", [ids[0], ids[2], ids[3]],
        edits=[{"entry": ids[2], "text": "Is the framing of the bell inventive?"}],
        added=[{"rubric": "trustworthiness", "text": "Is nothing shown that is not in the input?"}],
    )  # fmt: skip
    curation = apply_curation(drafted, record)
    chosen = curation.checklist
    assert [e.text for e in chosen] == [
        "Does the video show a bell?",
        "Is the framing of the bell inventive?",
        "Is the bell clearly visible?",
        "Is nothing shown that is not in the input?",
    ]
    assert chosen[1].provenance == PersonProvenance(person="ann1", action="edited", edited_from=ids[2])
    assert chosen[3].provenance == PersonProvenance(person="ann1", action="added")
    assert len(curation.candidates) == 5 and ids[2] not in {e.id for e in curation.candidates}
    with pytest.raises(ValueError, match="at most 1"):
        select("t1", "checklist_curation", "ann1", [ids[0]], added=[{"rubric": "clarity", "text": "a"}] * 2)


def test_crosscheck_is_by_another_person_and_agreement_is_alpha_over_task_by_entry():
    tasks = []
    for task in ("t1", "t2"):
        drafted = entries(task)
        ids = [e.id for e in drafted]
        curated = [ids[0], ids[2], ids[3]]  # one entry of each drafted rubric
        curation = apply_curation(drafted, select(task, "checklist_curation", "ann1", curated))
        with pytest.raises(ValidationFailed, match="curated this checklist"):
            check_crosscheck(curation, select(task, "checklist_crosscheck", "ann1", curated))
        with pytest.raises(ValidationFailed, match="creativity: 0 entries chosen"):
            check_crosscheck(curation, select(task, "checklist_crosscheck", "ann2", [ids[0], ids[3]]))
        # t1: the cross-checker agrees; t2: keeps relevance entry 1 instead of 0
        chosen = curated if task == "t1" else [ids[1], ids[2], ids[3]]
        crosscheck = select(task, "checklist_crosscheck", "ann2", chosen)
        check_crosscheck(curation, crosscheck)
        tasks.append(resolve_task(curation, crosscheck))
    assert [t.state for t in tasks] == ["final", "disagreement"]
    assert [e.id for e in tasks[0].final] == [entries("t1")[i].id for i in (0, 2, 3)]
    queue = adjudication_queue(tasks)
    assert [(d.task, d.kept_by, d.dropped_by) for d in queue] == [
        ("t2", ("ann1",), ("ann2",)),
        ("t2", ("ann2",), ("ann1",)),
    ]
    report = selection_agreement(tasks)
    # 8 units (2 tasks x 4 entries), 2 disagreements. By hand: each person keeps 3 of 4 entries per task, so
    # n1 = 12 kept and n0 = 4 dropped values, n = 16; D_o = 4 / 16, D_e = 2 * 4 * 12 / (16 * 15);
    # alpha = 1 - D_o / D_e = 1 - 15 * 4 / 96 = 0.375
    n, n0, n1, d_o = 16, 4, 12, 4  # d_o: mismatched ordered pairs
    assert report["value"] == pytest.approx(1 - (n - 1) * d_o / (2 * n0 * n1)) == pytest.approx(0.375)
    assert report["units"] == 8 and report["disagreements"] == 2 and report["raw_agreement"] == pytest.approx(0.75)

    ids = [e.id for e in entries("t2")]
    with pytest.raises(ValidationFailed, match="cannot adjudicate"):
        check_adjudication(
            tasks[1],
            ChecklistAdjudicationRecord(task="t2", adjudicator="ann2", selected=ids[:1], reason="x"),
            ChecklistBounds(),
        )
    with pytest.raises(ValidationFailed, match="creativity: 0 entries chosen"):
        check_adjudication(
            tasks[1],
            ChecklistAdjudicationRecord(task="t2", adjudicator="maya", selected=[ids[1], ids[3]], reason="x"),
            ChecklistBounds(),
        )
    decision = ChecklistAdjudicationRecord(
        task="t2", adjudicator="maya", selected=[ids[1], ids[2], ids[3]], reason="2 is sharper"
    )
    check_adjudication(tasks[1], decision, ChecklistBounds())
    done = resolve_task(tasks[1].curation, tasks[1].crosscheck, decision)
    assert done.state == "final" and [e.id for e in done.final] == [ids[1], ids[2], ids[3]]
    assert adjudication_queue([tasks[0], done]) == []


def test_nothing_cross_checked_gives_a_reason_not_a_number():
    report = selection_agreement([])
    assert report["value"] is None and "cross-checked" in report["undefined"]


def nineteen_over_six_rubrics(task: str = "t19") -> list:
    """A draft of five questions for each of the six rubrics (30 candidates)."""
    draft = ChecklistDraft(checklist={r: [f"Does the response meet {r} point {i}?" for i in range(5)] for r in RUBRICS})
    return drafted_entries(task, draft, "gemini-replay", PROMPT)


def test_nineteen_entries_over_six_rubrics_are_one_checklist_and_six_in_one_rubric_is_the_most():
    drafted = nineteen_over_six_rubrics()
    per_rubric = {"relevance": 5, "trustworthiness": 4, "creativity": 2, "clarity": 3, "coherence": 2,
                  "completeness": 3}  # fmt: skip
    picked = [e.id for r, n in per_rubric.items() for e in [d for d in drafted if d.rubric == r][:n]]
    assert len(picked) == 19
    added = [{"rubric": "relevance", "text": "Does it answer in the asked language?"}]
    curation = apply_curation(drafted, select("t19", "checklist_curation", "ann1", picked, added=added))
    assert rubric_counts(curation.checklist) == {**per_rubric, "relevance": 6}
    check_crosscheck(curation, select("t19", "checklist_crosscheck", "ann2", picked))
    with pytest.raises(ValidationFailed, match="relevance: 5 entries chosen; select 1 to 4 per rubric") as refused:
        apply_curation(drafted, select("t19", "checklist_curation", "ann1", picked), ChecklistBounds(1, 4))
    assert len(refused.value.problems) == 1
    extra = ChecklistEntry(id="rele-x", rubric="relevance", text="x", provenance=drafted[0].provenance)
    seven = [*picked, "rele-x"]
    record = select("t19", "checklist_curation", "ann1", seven, added=added)
    with pytest.raises(ValidationFailed, match="relevance: 7 entries chosen; select 1 to 6 per rubric"):
        apply_curation([*drafted, extra], record)
