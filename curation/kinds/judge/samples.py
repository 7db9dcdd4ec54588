"""Judging samples from reviewed responses (Judge Anything §2.3): D_score = (task, response) and D_pair =
(task, first, second) with the two responses from different systems, sampled seeded, sides randomized.

Each task draws from its own random stream (the seed and the task id), so adding a task or a response to
another task never changes this task's pairs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from curation.errors import Problem, ValidationFailed

from .schema import PairSample, ScoreSample

DEFAULT_PAIRS_PER_TASK = 2


@dataclass(frozen=True)
class UsableResponse:
    """A response that passed review, with what sampling needs to know about it."""

    id: str
    task: str
    system: str


def score_samples(responses: Iterable[UsableResponse], pairs_by_task: Mapping[str, str]) -> list[ScoreSample]:
    """One score sample per usable response, in task then system order."""
    ordered = sorted(responses, key=lambda r: (r.task, r.system, r.id))
    return [
        ScoreSample(id=f"s:{r.id}", task=r.task, response=r.id, system=r.system, modality_pair=pairs_by_task[r.task])
        for r in ordered
    ]


def _task_rng(seed: int, task: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}\n{task}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def pair_samples(
    responses: Iterable[UsableResponse],
    pairs_by_task: Mapping[str, str],
    per_task: int = DEFAULT_PAIRS_PER_TASK,
    seed: int = 0,
) -> list[PairSample]:
    """Up to ``per_task`` pairs per task, each of two systems, no pair of systems twice in a task.

    A task with responses from fewer than two systems gives no pair. If one system answered twice, one of
    its responses is drawn for each pair.
    """
    if per_task < 1:
        raise ValidationFailed([Problem(f"{per_task} pairs per task; it must be at least 1", "pairs_per_task")])
    by_task: dict[str, dict[str, list[str]]] = {}
    for r in responses:
        by_task.setdefault(r.task, {}).setdefault(r.system, []).append(r.id)
    samples: list[PairSample] = []
    for task in sorted(by_task):
        systems = by_task[task]
        names = sorted(systems)
        candidates: Sequence[tuple[str, str]] = list(combinations(names, 2))
        if not candidates:
            continue
        rng = _task_rng(seed, task)
        chosen = rng.choice(len(candidates), size=min(per_task, len(candidates)), replace=False)
        for index in sorted(int(i) for i in chosen):
            a, b = candidates[index]
            ra = sorted(systems[a])[int(rng.integers(len(systems[a])))]
            rb = sorted(systems[b])[int(rng.integers(len(systems[b])))]
            swapped = bool(rng.integers(2))
            (first, fs), (second, ss) = ((rb, b), (ra, a)) if swapped else ((ra, a), (rb, b))
            samples.append(
                PairSample(
                    id=f"p:{task}:{fs}~{ss}",
                    task=task,
                    first=first,
                    second=second,
                    first_system=fs,
                    second_system=ss,
                    modality_pair=pairs_by_task[task],
                    swapped=swapped,
                )
            )
    return samples
