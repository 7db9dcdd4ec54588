"""Cohen's kappa (two coders, optionally weighted) and Fleiss' kappa, with bootstraps by weighting.

Both are functions of per-unit contributions: Cohen's of the cell each unit falls in of the two coders'
confusion table, Fleiss' of each unit's category counts. A batch of resamples is then a sum of draw
counts per cell, or one matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from curation.errors import Problem, ValidationFailed

from .bootstrap import percentile_interval
from .errors import UndefinedStatistic
from .estimate import Estimate
from .ratings import MISSING, Ratings

WEIGHTS = ("none", "linear", "quadratic")
MAX_INTEGER_SPAN = 100
"""Integer scales wider than this are weighted by rank, not by value, to keep the table small."""


@dataclass(frozen=True)
class _Pairs:
    """Units both coders rated, as positions on the category scale, and the scale's size."""

    first: np.ndarray
    second: np.ndarray
    n_categories: int
    units: np.ndarray


def _category_positions(ratings: Ratings) -> tuple[np.ndarray, int]:
    """Each value's step on the scale: integers keep their gaps (1, 2, 4 -> 0, 1, 3), others their rank."""
    if ratings.numeric and all(float(v).is_integer() for v in ratings.values):
        lowest, highest = int(min(ratings.values)), int(max(ratings.values))
        if highest - lowest > MAX_INTEGER_SPAN:
            return np.arange(len(ratings.values)), len(ratings.values)
        positions = np.asarray([int(v) - lowest for v in ratings.values], dtype=np.int64)
        return positions, int(positions[-1]) + 1
    return np.arange(len(ratings.values)), len(ratings.values)


def _pairs(ratings: Ratings) -> _Pairs:
    if len(ratings.coders) != 2:
        raise UndefinedStatistic(
            f"Cohen's kappa needs exactly two coders; the ratings have {len(ratings.coders)} "
            f"({', '.join(ratings.coders[:6])}{' ...' if len(ratings.coders) > 6 else ''}); "
            "use `curate stats fleiss` or `curate stats alpha` for more"
        )
    both = np.flatnonzero((ratings.matrix != MISSING).all(axis=1))
    if both.size == 0:
        raise UndefinedStatistic("Cohen's kappa is undefined: no unit was rated by both coders")
    positions, size = _category_positions(ratings)
    return _Pairs(
        first=positions[ratings.matrix[both, 0]],
        second=positions[ratings.matrix[both, 1]],
        n_categories=size,
        units=both,
    )


def _disagreement_weights(size: int, weights: str) -> np.ndarray:
    steps = np.abs(np.arange(size)[:, None] - np.arange(size)[None, :]).astype(np.float64)
    if weights == "none":
        return (steps > 0).astype(np.float64)
    return steps if weights == "linear" else steps**2


def _cohen_batch(pairs: _Pairs, weights: str, draws: np.ndarray) -> np.ndarray:
    """Kappa per row of ``draws`` (resamples x paired units): 1 - sum(w O) / sum(w E)."""
    k = pairs.n_categories
    cells = pairs.first * k + pairs.second
    order = np.argsort(cells, kind="stable")
    cell_ids, starts = np.unique(cells[order], return_index=True)
    table = np.zeros((draws.shape[0], k * k))
    table[:, cell_ids] = np.add.reduceat(draws[:, order], starts, axis=1)
    table = table.reshape(-1, k, k)
    w = _disagreement_weights(k, weights)
    total = table.sum(axis=(1, 2))
    expected = np.einsum("bi,bj->bij", table.sum(axis=2), table.sum(axis=1)) / total[:, None, None]
    observed_d = (table * w).sum(axis=(1, 2))
    expected_d = (expected * w).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - observed_d / expected_d
    return np.where(expected_d > 0, kappa, np.nan)


def cohen_kappa(
    ratings: Ratings, weights: str = "none", bootstrap: int = 0, seed: int = 0, confidence: float = 0.95
) -> Estimate:
    """Cohen's kappa over the units both coders rated; ``weights`` linear/quadratic for ordered scales."""
    from sklearn.metrics import cohen_kappa_score

    if weights not in WEIGHTS:
        raise ValidationFailed(
            [Problem(f"unknown weights {weights!r}; use one of {', '.join(WEIGHTS)}", field="weights")]
        )
    if weights != "none" and not ratings.numeric:
        raise ValidationFailed(
            [Problem("weighted kappa needs an ordered numeric scale; the values include text", field="value")],
            "drop --weights for categories",
        )
    pairs = _pairs(ratings)
    if np.unique(np.concatenate([pairs.first, pairs.second])).size < 2:
        raise UndefinedStatistic(
            "Cohen's kappa is undefined: both coders gave the same single category to every unit "
            "(no variation, so chance agreement is 1)"
        )
    value = float(
        cohen_kappa_score(
            pairs.first,
            pairs.second,
            labels=np.arange(pairs.n_categories),
            weights=None if weights == "none" else weights,
        )
    )
    if not np.isfinite(value):
        raise UndefinedStatistic("Cohen's kappa is undefined for these ratings (chance agreement is 1)")
    interval = None
    if bootstrap:
        groups = ratings.kept_group_index(pairs.units)
        interval = percentile_interval(
            lambda d: _cohen_batch(pairs, weights, d), pairs.units.size, bootstrap, seed, confidence, groups
        )
    label = "Cohen's kappa" if weights == "none" else f"Cohen's kappa ({weights} weights)"
    return Estimate(
        statistic="cohen_kappa",
        label=label,
        value=value,
        units=int(pairs.units.size),
        coders=2,
        ratings=int(2 * pairs.units.size),
        params={"weights": weights},
        interval=interval,
    )


def cohen_kappa_from_pairs(ratings: Ratings, weights: str = "none") -> float:
    """Kappa by this module's own algebra (every unit drawn once); the tests hold it to scikit-learn."""
    pairs = _pairs(ratings)
    return float(_cohen_batch(pairs, weights, np.ones((1, pairs.units.size)))[0])


def raw_agreement(ratings: Ratings) -> float:
    """Share of the units both coders rated on which they gave the same value."""
    pairs = _pairs(ratings)
    return float(np.mean(pairs.first == pairs.second))


def _fleiss_counts(ratings: Ratings) -> np.ndarray:
    counts = ratings.value_counts()
    rated = counts.sum(axis=1)
    counts = counts[rated > 0]
    rated = rated[rated > 0]
    if rated.max() < 2:
        raise UndefinedStatistic("Fleiss' kappa is undefined: no unit was rated by two or more coders")
    if rated.min() != rated.max():
        sizes = ", ".join(str(int(s)) for s in np.unique(rated))
        raise UndefinedStatistic(
            f"Fleiss' kappa needs the same number of ratings on every unit; these units have {sizes}. "
            "Use `curate stats alpha --level nominal`, which allows missing ratings"
        )
    if np.count_nonzero(counts.sum(axis=0)) < 2:
        raise UndefinedStatistic(
            "Fleiss' kappa is undefined: every rating is in one category (no variation, so chance agreement is 1)"
        )
    return counts.astype(np.float64)


def _fleiss_batch(counts: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Fleiss' kappa per row of ``draws`` (resamples x units) from per-unit agreement and pooled shares."""
    raters = counts[0].sum()
    unit_agreement = ((counts**2).sum(axis=1) - raters) / (raters * (raters - 1))
    drawn = draws.sum(axis=1)
    observed = draws @ unit_agreement / drawn
    shares = (draws @ counts) / (drawn * raters)[:, None]
    chance = (shares**2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (observed - chance) / (1.0 - chance)
    return np.where(chance < 1.0, kappa, np.nan)


def fleiss_kappa(ratings: Ratings, bootstrap: int = 0, seed: int = 0, confidence: float = 0.95) -> Estimate:
    """Fleiss' kappa (1971): any number of coders, the same number of ratings on every unit."""
    counts = _fleiss_counts(ratings)
    value = float(_fleiss_batch(counts, np.ones((1, counts.shape[0])))[0])
    interval = None
    if bootstrap:
        groups = ratings.kept_group_index(ratings.value_counts().sum(axis=1) > 0)
        interval = percentile_interval(
            lambda d: _fleiss_batch(counts, d), counts.shape[0], bootstrap, seed, confidence, groups
        )
    return Estimate(
        statistic="fleiss_kappa",
        label="Fleiss' kappa",
        value=value,
        units=int(counts.shape[0]),
        coders=len(ratings.coders),
        ratings=int(counts.sum()),
        params={"raters_per_unit": int(counts[0].sum())},
        interval=interval,
    )
