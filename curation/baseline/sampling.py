"""The subset: strata of language x tier x leaf, an exact proportional allocation, a seeded draw per stratum.

Allocation (Hamilton's largest-remainder method): a stratum of ``N_s`` of the pool's ``N`` items has the quota
``q_s = size * N_s / N``; it first gets ``floor(q_s)``, and the items still to place go one each to the strata
with the largest remainders ``q_s - floor(q_s)``; remainders that tie are ordered by a seeded shuffle of the
strata. Every stratum therefore gets ``floor(q_s)`` or ``ceil(q_s)`` items and the total is exactly ``size``.
Within a stratum the items are a seeded sample. Exact rational arithmetic keeps ties ties.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import floor


@dataclass(frozen=True)
class PoolItem:
    """What the draw needs of an item."""

    id: str
    group: str
    language: str
    tier: int
    """How many modalities are individually ambiguous (``len(ambiguous)``, TRIAD's ambiguity tier)."""
    leaf: str
    """The taxonomy leaf of the modality the group perturbs; all the item's leaves for a ``mixed`` group."""


def leaf_of(taxonomy: Mapping[str, str], perturbed: str) -> str:
    """The item's modality leaf for stratification (see :class:`PoolItem`)."""
    if perturbed in taxonomy:
        return f"{perturbed}:{taxonomy[perturbed]}"
    return "+".join(f"{m}:{leaf}" for m, leaf in sorted(taxonomy.items()))


def stratum_key(item: PoolItem) -> str:
    return f"{item.language}|tier {item.tier}|{item.leaf}"


@dataclass(frozen=True)
class Stratum:
    key: str
    population: int
    quota: Fraction
    drawn: int

    def as_json(self) -> dict[str, object]:
        return {"key": self.key, "population": self.population, "quota": float(self.quota), "drawn": self.drawn}


def allocate(populations: Mapping[str, int], size: int, seed: int) -> dict[str, tuple[Fraction, int]]:
    """Each stratum's exact quota and its whole share (largest remainders, seeded tie order)."""
    total = sum(populations.values())
    size = min(size, total)
    quotas = {key: Fraction(size * n, total) for key, n in populations.items()}
    shares = {key: floor(q) for key, q in quotas.items()}
    order = sorted(populations)
    random.Random(seed).shuffle(order)
    rank = {key: i for i, key in enumerate(order)}
    by_remainder = sorted(populations, key=lambda k: (-(quotas[k] - shares[k]), rank[k]))
    for key in by_remainder[: size - sum(shares.values())]:
        shares[key] += 1
    return {key: (quotas[key], shares[key]) for key in populations}


def draw_subset(pool: Sequence[PoolItem], size: int, seed: int) -> tuple[list[str], list[Stratum]]:
    """The subset's ids (strata in key order, each stratum's sample in id order) and the strata it came from."""
    strata: dict[str, list[PoolItem]] = {}
    for item in sorted(pool, key=lambda i: i.id):
        strata.setdefault(stratum_key(item), []).append(item)
    shares = allocate({key: len(items) for key, items in strata.items()}, size, seed)
    chosen: list[str] = []
    out: list[Stratum] = []
    for key in sorted(strata):
        quota, share = shares[key]
        members = strata[key]
        picked = random.Random(f"{seed}|{key}").sample(members, share)
        chosen += sorted(i.id for i in picked)
        out.append(Stratum(key, len(members), quota, share))
    return chosen, out
