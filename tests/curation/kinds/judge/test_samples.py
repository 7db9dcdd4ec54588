"""Score and pair samples from reviewed responses: seeded, from different systems, sides recorded."""

from __future__ import annotations

from collections import Counter

import pytest

from curation.errors import ValidationFailed
from curation.kinds.judge.samples import UsableResponse, pair_samples, score_samples

SYSTEMS = ("flux", "sd35", "recraft", "dalle3")


def responses(tasks=("t1", "t2", "t3"), systems=SYSTEMS):
    return [UsableResponse(f"{t}:{s}", t, s) for t in tasks for s in systems]


PAIRS = {t: "text->image" for t in ("t1", "t2", "t3", "t4")}


def test_pairs_are_seeded_from_different_systems_two_per_task():
    first = pair_samples(responses(), PAIRS, seed=3)
    assert first == pair_samples(list(reversed(responses())), PAIRS, seed=3)  # input order does not matter
    assert Counter(p.task for p in first) == {"t1": 2, "t2": 2, "t3": 2}
    for p in first:
        assert p.first_system != p.second_system
        assert p.first == f"{p.task}:{p.first_system}" and p.second == f"{p.task}:{p.second_system}"
        assert p.swapped == (p.first_system > p.second_system)  # unswapped pairs keep name order
    per_task = {t: {frozenset((p.first_system, p.second_system)) for p in first if p.task == t} for t in PAIRS}
    assert all(len(v) == 2 for t, v in per_task.items() if t != "t4")  # no pair of systems twice
    others = [pair_samples(responses(), PAIRS, seed=s) for s in range(8)]
    assert len({tuple(p.id for p in o) for o in others}) > 1  # the seed matters
    assert {p.swapped for o in others for p in o} == {True, False}  # both sides occur


def test_adding_a_task_does_not_change_the_other_tasks_pairs():
    before = pair_samples(responses(), PAIRS, seed=1)
    after = pair_samples(responses(("t1", "t2", "t3", "t4")), PAIRS, seed=1)
    assert [p for p in after if p.task != "t4"] == before


def test_tasks_with_one_system_give_no_pair_and_bounds_are_checked():
    rs = responses(("t1",), ("flux",)) + responses(("t2",), ("flux", "sd35"))
    pairs = pair_samples(rs, PAIRS, per_task=5)
    assert [(p.task, {p.first_system, p.second_system}) for p in pairs] == [("t2", {"flux", "sd35"})]
    with pytest.raises(ValidationFailed, match="at least 1"):
        pair_samples(rs, PAIRS, per_task=0)


def test_score_samples_one_per_response():
    samples = score_samples(responses(("t2", "t1"), ("b", "a")), PAIRS)
    assert [s.id for s in samples] == ["s:t1:a", "s:t1:b", "s:t2:a", "s:t2:b"]
    assert {s.modality_pair for s in samples} == {"text->image"}
