"""The few statistics a campaign report needs, behind small functions.

These wrap the ``krippendorff`` package and scipy until ``curation.agreement`` (alpha, kappa, correlations,
Elo, Bradley-Terry; another branch) lands on main; then each function here becomes a call into it.
A statistic without a defined value comes back with ``value=None`` and the reason, never NaN.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Stat:
    value: float | None
    n: int
    undefined: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"value": None if self.value is None else round(self.value, 4), "n": self.n,
                "undefined": self.undefined or None}


def krippendorff_alpha(rows: Iterable[tuple[Hashable, Hashable, Any]], level: str = "ordinal") -> Stat:
    """Krippendorff's alpha over (unit, coder, value) rows; ``n`` counts the pairable values."""
    import krippendorff

    units: dict[Hashable, int] = {}
    coders: dict[Hashable, int] = {}
    cells: list[tuple[int, int, Any]] = []
    for unit, coder, value in rows:
        cells.append((units.setdefault(unit, len(units)), coders.setdefault(coder, len(coders)), value))
    per_unit = np.bincount([u for u, _, _ in cells], minlength=len(units)) if cells else np.array([])
    pairable = int(per_unit[per_unit >= 2].sum()) if len(per_unit) else 0
    if pairable < 2:
        return Stat(None, pairable, "no unit has two ratings yet")
    if level == "nominal":
        categories = {v: i for i, v in enumerate(sorted({str(v) for _, _, v in cells}))}
        cells = [(u, c, categories[str(v)]) for u, c, v in cells]
    pairable_values = {v for u, _, v in cells if per_unit[u] >= 2}
    if len(pairable_values) < 2:
        return Stat(None, pairable, "every rating of the units rated twice has the same value: no variation")
    matrix = np.full((len(coders), len(units)), np.nan)
    for u, c, v in cells:
        matrix[c, u] = float(v)
    value = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    if not np.isfinite(value):
        return Stat(None, pairable, "alpha is undefined for these ratings")
    return Stat(value, pairable)


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
        return {"mean": round(mean, 4), "low": None, "high": None, "n": n,
                "undefined": "one rated unit: no interval"}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(clusters), size=(resamples, len(clusters)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return {"mean": round(mean, 4), "low": round(float(low), 4), "high": round(float(high), 4), "n": n,
            "confidence": confidence, "resamples": resamples, "seed": seed}


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


def elo(
    games: Sequence[tuple[str, str, float]], k: float = 32.0, base: float = 1000.0, rounds: int = 100, seed: int = 0
) -> dict[str, float]:
    """Elo ratings from (a, b, score of a) games, averaged over ``rounds`` seeded orders (1: the given order)."""
    players = sorted({p for a, b, _ in games for p in (a, b)})
    if not games:
        return {p: base for p in players}
    rng = np.random.default_rng(seed)
    total = dict.fromkeys(players, 0.0)
    for round_ in range(rounds):
        order = range(len(games)) if round_ == 0 and rounds == 1 else rng.permutation(len(games))
        rating = dict.fromkeys(players, base)
        for i in order:
            a, b, score = games[i]
            expected = 1.0 / (1.0 + 10 ** ((rating[b] - rating[a]) / 400.0))
            rating[a] += k * (score - expected)
            rating[b] -= k * (score - expected)
        for p in players:
            total[p] += rating[p]
    return {p: round(total[p] / rounds, 2) for p in players}
