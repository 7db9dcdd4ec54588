"""TRIAD's separation checks read the records in one pass; they name the same role as the rule's plain reading
(sort a reviewer's records by id, take the first one before their first at this stage whose role does not go
with it), whatever the records and their order."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from curation.facts import RecordFacts
from curation.kinds.mcq.separation import _conflict, _first_of_both, _role, compatible

STAGES = ("grammar", "audio_signoff", "subset_checklist", "answer_check", "group_integration", "image_screening")
SUBJECTS = ("item:i1", "item:i2", "group:g")
PEOPLE = ("rev1", "rev2", "rev3")


@st.composite
def records_by_stage(draw: st.DrawFn) -> dict[str, list[RecordFacts]]:
    picks = draw(st.lists(st.tuples(st.sampled_from(STAGES), st.sampled_from(SUBJECTS), st.sampled_from(PEOPLE))))
    ids = draw(st.permutations(range(1, len(picks) + 1)))
    out: dict[str, list[RecordFacts]] = {}
    for (stage, subject, reviewer), rid in zip(picks, ids, strict=True):
        out.setdefault(stage, []).append(RecordFacts(subject, stage, reviewer, 1, "", {}, rid))
    return out


def conflict_by_definition(reviewer: str, stage: str, subjects: set[str], records: dict) -> str | None:  # type: ignore[type-arg]
    wanted = _role(stage)
    if wanted is None:
        return None
    own = [r for recs in records.values() for r in recs if r.reviewer == reviewer and r.subject in subjects]
    cutoff = min((r.id for r in own if r.stage == stage), default=math.inf)
    for rec in sorted((r for r in own if r.id < cutoff), key=lambda r: r.id):
        held = _role(rec.stage)
        if held is not None and not compatible(held, wanted):
            return held
    return None


def first_of_both_by_definition(reviewer: str, stage: str, subject: str, records: dict) -> str | None:  # type: ignore[type-arg]
    wanted = _role(stage)
    if wanted not in ("B", "C"):
        return None
    other = "C" if wanted == "B" else "B"
    here = [r for r in records.get(stage, ()) if r.subject == subject]
    cutoff = min((r.id for r in here if r.reviewer == reviewer), default=math.inf)
    if any(r.reviewer != reviewer and r.id < cutoff for r in here):
        return None
    there = [r for r in records.get("grammar" if other == "B" else "audio_signoff", ()) if r.subject == subject]
    first = min(there, key=lambda r: r.id, default=None)
    return other if first is not None and first.reviewer == reviewer and first.id < cutoff else None


@given(records_by_stage(), st.sampled_from(PEOPLE), st.sampled_from(STAGES))
def test_one_pass_names_the_same_role(records: dict, reviewer: str, stage: str) -> None:  # type: ignore[type-arg]
    subjects = {"item:i1", "group:g"}
    assert _conflict(reviewer, stage, subjects, records) == conflict_by_definition(reviewer, stage, subjects, records)
    assert _first_of_both(reviewer, stage, "item:i1", records) == first_of_both_by_definition(
        reviewer, stage, "item:i1", records
    )
