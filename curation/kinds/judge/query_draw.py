"""Seeded draws of candidate queries (Judge Anything §2.1, Table 5: 100 queries per task, sampled at random from
each task's source benchmarks) and the open-licence hold (§2.1: only open-source samples).

A draw takes, per task (the query's modality pair, ``image->text``) and optionally per source within it, the
first N of the task's eligible query ids shuffled by a generator seeded with the seed and the group's name:
the same file and seed draw the same ids whatever the file's line order, and each group's draw is independent
of the others. A query whose licence is not one of the workspace's open licences is never drawn; it is
imported held by name (``licence:closed:<SPDX id>`` for a licence recognized and not among the workspace's open ones,
``licence:unknown:<text>`` for one not recognized), so the curator sees which and why, and it is never promoted.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from curation.errors import Problem, ValidationFailed
from curation.licences import DEFAULT_OPEN_LICENCES, is_open, normalize_license

from .schema import TaskLine, modality_pair


@dataclass(frozen=True)
class DrawSpec:
    """The quotas of a draw: queries per task, per source within a task, or both (per source first)."""

    seed: int = 0
    per_task: int | None = None
    per_source: int | None = None

    def __post_init__(self) -> None:
        problems = [
            Problem(f"{name} takes a whole number of 1 or more, not {value}", name)
            for name, value in (("--per-task", self.per_task), ("--per-source", self.per_source))
            if value is not None and value < 1
        ]
        if self.per_task is None and self.per_source is None:
            problems.append(Problem("a draw needs --per-task N, --per-source N or both", "--per-task"))
        if problems:
            raise ValidationFailed(problems, "nothing was imported")


@dataclass(frozen=True)
class Drawn:
    eligible: int
    drawn: list[str]
    held: list[dict[str, str]]


def licence_hold(value: str, accepted: Collection[str]) -> str | None:
    """The hold reason of a licence that is not open (naming it), or None for an open one."""
    if is_open(value, accepted):
        return None
    spdx = {x.casefold(): x for x in DEFAULT_OPEN_LICENCES}.get(value.strip().casefold())
    known = spdx or normalize_license(value)
    return f"licence:closed:{known}" if known else f"licence:unknown:{value.strip()}"


def task_of(line: TaskLine) -> str:
    return modality_pair(tuple(line.inputs.media()), line.output)


def _take(ids: Iterable[str], n: int, seed: int, group: str) -> list[str]:
    ordered = sorted(ids)
    random.Random(f"{seed}|{group}").shuffle(ordered)
    return ordered[:n]


def draw(lines: Iterable[TaskLine], accepted: Collection[str], spec: DrawSpec) -> Drawn:
    """The ids drawn from ``lines`` (each task's quota, of its open-licence queries) and those held by licence."""
    groups: dict[str, dict[str, list[str]]] = {}
    held: list[dict[str, str]] = []
    eligible = 0
    for line in lines:
        if licence_hold(line.license, accepted):
            held.append({"id": line.id, "license": line.license})
            continue
        eligible += 1
        groups.setdefault(task_of(line), {}).setdefault(line.source, []).append(line.id)
    drawn: list[str] = []
    for task, sources in sorted(groups.items()):
        pool = [
            i
            for source, ids in sorted(sources.items())
            for i in (ids if spec.per_source is None else _take(ids, spec.per_source, spec.seed, f"{task}|{source}"))
        ]
        drawn += pool if spec.per_task is None else _take(pool, spec.per_task, spec.seed, task)
    return Drawn(eligible, sorted(drawn), sorted(held, key=lambda h: h["id"]))
