"""The statistics a campaign report needs, over ``curation.agreement`` where it has them.

Krippendorff's alpha, Elo and judge–human agreement come from ``curation.agreement``; what it does not
offer (a cluster bootstrap of means, correlations of paired outputs) is here. A statistic without a
defined value comes back with ``value=None`` and the reason, never NaN.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Stat:
    value: float | None
    units: int
    undefined: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "value": None if self.value is None else round(self.value, 4),
            "units": self.units,
            "undefined": self.undefined or None,
        }


def krippendorff_alpha(rows: Iterable[tuple[Hashable, Hashable, Any]], level: str = "ordinal") -> Stat:
    """Krippendorff's alpha over (unit, coder, value) rows; ``units`` counts the pairable units."""
    from curation.agreement import UndefinedStatistic, ratings_from_rows
    from curation.agreement import krippendorff_alpha as alpha

    records = [(i, {"unit": str(u), "coder": str(c), "value": v}) for i, (u, c, v) in enumerate(rows, start=1)]
    if not records:
        return Stat(None, 0, "no ratings yet")
    try:
        estimate = alpha(ratings_from_rows(records), level)
    except UndefinedStatistic as exc:
        return Stat(None, 0, str(exc))
    return Stat(estimate.value, estimate.units)


def bootstrap_mean(
    clusters: Sequence[Sequence[float]], resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> dict[str, Any]:
    """Mean over all values with a percentile interval that resamples whole clusters (e.g. one output's ratings)."""
    clusters = [c for c in clusters if len(c)]
    n = sum(len(c) for c in clusters)
    if not n:
        return {"mean": None, "low": None, "high": None, "n": 0, "undefined": "no ratings"}
    sums = np.array([float(sum(c)) for c in clusters])
    counts = np.array([len(c) for c in clusters], dtype=float)
    mean = float(sums.sum() / counts.sum())
    if len(clusters) < 2:
        return {"mean": round(mean, 4), "low": None, "high": None, "n": n, "undefined": "one rated unit: no interval"}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(clusters), size=(resamples, len(clusters)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return {
        "mean": round(mean, 4),
        "low": round(float(low), 4),
        "high": round(float(high), 4),
        "n": n,
        "confidence": confidence,
        "resamples": resamples,
        "seed": seed,
    }


def correlations(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Spearman's rho, Kendall's tau-b and Pearson's r of paired values."""
    from scipy import stats

    n = len(x)
    if n < 3:
        return {"n": n, "undefined": f"{n} pair(s): a correlation needs at least 3"}
    if len(set(x)) < 2 or len(set(y)) < 2:
        return {"n": n, "undefined": "one side does not vary: a correlation is undefined"}
    return {
        "n": n,
        "spearman": round(float(stats.spearmanr(x, y).statistic), 4),
        "kendall_tau_b": round(float(stats.kendalltau(x, y).statistic), 4),
        "pearson": round(float(stats.pearsonr(x, y).statistic), 4),
    }


def elo(games: Sequence[tuple[str, str, float]], item: str = "") -> dict[str, float]:
    """Elo ratings (K = 32, start 1000, ties 0.5) after (a, b, score of a) games in the given order."""
    from curation.agreement import PairRow, UndefinedStatistic, elo_ratings

    outcome = {1.0: "A", 0.0: "B", 0.5: "tie"}
    try:
        ratings = elo_ratings(PairRow(item, a, b, outcome[score]) for a, b, score in games)
    except UndefinedStatistic:
        return {}
    return {name: round(value, 2) for name, value in ratings.items()}


def pair_agreement(pairs: Sequence[tuple[str, str, str, str, str]]) -> dict[str, Any]:
    """Judge accuracy against the human outcome on (item, a, b, human, judge) pairs, with and without human ties."""
    from curation.agreement import PairRow, UndefinedStatistic, pair_accuracy

    try:
        return pair_accuracy(PairRow(*p) for p in pairs).as_dict()
    except UndefinedStatistic as exc:
        return {"pairs": 0, "undefined": str(exc)}


def system_agreement(rows: Sequence[tuple[str, str, float, float]]) -> dict[str, Any]:
    """System-level judge–human correlations and the mean absolute difference, from (system, item, human, judge)."""
    from curation.agreement import ScoreRow, UndefinedStatistic, score_agreement

    try:
        return score_agreement(ScoreRow(s, i, "overall", h, j) for s, i, h, j in rows).as_dict()
    except UndefinedStatistic as exc:
        return {"rows": len(rows), "undefined": str(exc)}
