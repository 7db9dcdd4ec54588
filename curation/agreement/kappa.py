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


@dataclass(frozen=True)
class _Pairs:
    """Units both coders rated, as indices into the ratings' sorted values, and those values' positions.

    ``scale`` holds each value's position for the weights: the number itself for numeric data, the rank
    otherwise. Weights come from distances on it, so a weighted kappa does not change with the units of a
    numeric scale (x -> a*x + b).
    """

    first: np.ndarray
    second: np.ndarray
    scale: np.ndarray
    units: np.ndarray

    @property
    def n_categories(self) -> int:
        return int(self.scale.size)


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
    scale = (
        np.asarray(ratings.values, dtype=np.float64) if ratings.numeric else np.arange(len(ratings.values), dtype=float)
    )
    return _Pairs(first=ratings.matrix[both, 0], second=ratings.matrix[both, 1], scale=scale, units=both)


def _disagreement_weights(scale: np.ndarray, weights: str) -> np.ndarray:
    """Disagreement of each pair of values: 0/1, or their distance (squared), divided by the largest.

    Dividing by the largest distance leaves kappa unchanged (it is a ratio of weighted sums) and keeps the
    sums of a wide scale in a well-conditioned range.
    """
    distance = np.abs(scale[:, None] - scale[None, :])
    if weights == "none":
        return (distance > 0).astype(np.float64)
    weight = distance if weights == "linear" else distance**2
    largest = weight.max()
    return weight / largest if largest > 0 else weight


def _cohen_batch(pairs: _Pairs, weights: str, draws: np.ndarray) -> np.ndarray:
    """Kappa per row of ``draws`` (resamples x paired units): 1 - sum(w O) / sum(w E)."""
    k = pairs.n_categories
    cells = pairs.first * k + pairs.second
    order = np.argsort(cells, kind="stable")
    cell_ids, starts = np.unique(cells[order], return_index=True)
    table = np.zeros((draws.shape[0], k * k))
    table[:, cell_ids] = np.add.reduceat(draws[:, order], starts, axis=1)
    table = table.reshape(-1, k, k)
    w = _disagreement_weights(pairs.scale, weights)
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
    """Cohen's kappa over the units both coders rated; ``weights`` linear/quadratic for numeric scales.

    Weighted kappa weighs a disagreement by the distance between the two values (squared for quadratic),
    so it is the same in any units of the scale: codes 0, 1, 100 and 0, 1, 101 differ only where they should.
    """
    if weights not in WEIGHTS:
        raise ValidationFailed(
            [Problem(f"unknown weights {weights!r}; use one of {', '.join(WEIGHTS)}", field="weights")]
        )
    if weights != "none" and not ratings.numeric:
        raise ValidationFailed(
            [ratings.not_numeric("weighted kappa needs an ordered numeric scale")], "drop --weights for categories"
        )
    pairs = _pairs(ratings)
    if np.unique(np.concatenate([pairs.first, pairs.second])).size < 2:
        raise UndefinedStatistic(
            "Cohen's kappa is undefined: both coders gave the same single category to every unit "
            "(no variation, so chance agreement is 1)"
        )
    value = float(_cohen_batch(pairs, weights, np.ones((1, pairs.units.size)))[0])
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
