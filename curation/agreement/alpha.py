"""Krippendorff's alpha at the nominal, ordinal, interval and ratio levels, with a fast bootstrap.

The point estimate comes from the ``krippendorff`` package. The bootstrap uses the same coincidence
algebra, rewritten as per-unit sums: for a unit with value counts ``n_u`` (``m_u`` pairable values) the
observed disagreement it contributes is ``sum_ck n_uc n_uk d2(c, k) / (m_u - 1)``. For the interval and
ordinal metrics ``d2(c, k) = (x_c - x_k)^2`` for some position ``x`` (the values themselves, or the
mid-ranks of the pooled value counts for ordinal), so that sum is ``2 (m_u sum n x^2 - (sum n x)^2)``:
a batch of resamples is a few matrix products, with no loop over pairs of coders or of values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from curation.errors import Problem, ValidationFailed

from .bootstrap import percentile_interval
from .errors import UndefinedStatistic
from .estimate import Estimate
from .ratings import Ratings

LEVELS = ("nominal", "ordinal", "interval", "ratio")
MAX_TENSOR_VALUES = 16
"""Up to this many distinct values, the ordinal bootstrap keeps each unit's coincidence matrix."""


@dataclass(frozen=True)
class _UnitSums:
    """Pairable units' value counts and the constants every resample reuses."""

    counts: np.ndarray  # pairable units x values
    values: np.ndarray  # numeric positions of the values (indices for nominal)
    pairable: np.ndarray  # indices of the pairable units among all units
    level: str
    coincidences: np.ndarray | None = None  # units x values^2, each unit's n n^T / (m - 1), for ordinal

    @property
    def sizes(self) -> np.ndarray:
        return self.counts.sum(axis=1)


def _check_level(ratings: Ratings, level: str) -> None:
    if level not in LEVELS:
        raise ValidationFailed([Problem(f"unknown level {level!r}; use one of {', '.join(LEVELS)}", field="level")])
    if level == "nominal":
        return
    if not ratings.numeric:
        raise ValidationFailed(
            [ratings.not_numeric(f"the {level} level needs numbers")],
            "use --level nominal for categories, or give numeric values",
        )
    if level == "ratio" and min(float(v) for v in ratings.values) < 0:
        raise ValidationFailed(
            [Problem(f"value {min(ratings.values):g} is negative; ratio values start at zero", field="value")],
            "use --level interval for values that can be negative",
        )


def _unit_sums(ratings: Ratings, level: str) -> _UnitSums:
    """Check that alpha is defined for these ratings and gather the pairable units."""
    _check_level(ratings, level)
    if len(ratings.coders) < 2:
        raise UndefinedStatistic(
            f"Krippendorff's alpha needs at least two coders; the ratings have one ({ratings.coders[0]})"
        )
    counts = ratings.value_counts()
    pairable = np.flatnonzero(counts.sum(axis=1) >= 2)
    if pairable.size == 0:
        raise UndefinedStatistic(
            "Krippendorff's alpha is undefined: no unit was rated by two or more coders (no pairable values)"
        )
    pooled = counts[pairable].sum(axis=0)
    if np.count_nonzero(pooled) < 2:
        only = ratings.value_text(int(np.flatnonzero(pooled)[0]))
        raise UndefinedStatistic(
            f"Krippendorff's alpha is undefined: every pairable rating is {only} (no variation, so the "
            "expected disagreement is zero)"
        )
    positions = np.asarray(ratings.values, dtype=np.float64) if ratings.numeric else np.arange(len(ratings.values))
    if level == "interval":  # differences only: centre the values (see _squared_spread)
        positions = positions - positions.mean()
    kept = counts[pairable].astype(np.float64)
    coincidences = None
    if level == "ordinal" and kept.shape[1] <= MAX_TENSOR_VALUES:
        scale = 1.0 / (kept.sum(axis=1) - 1.0)
        coincidences = (scale[:, None, None] * kept[:, :, None] * kept[:, None, :]).reshape(kept.shape[0], -1)
    return _UnitSums(
        counts=kept,
        values=positions.astype(np.float64),
        pairable=pairable,
        level=level,
        coincidences=coincidences,
    )


def _squared_spread(counts: np.ndarray, sizes: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``sum_ck n_c n_k (x_c - x_k)^2`` for each row of ``counts`` (its total in ``sizes``).

    Shift-invariant in ``x``; callers centre ``x`` so that the difference of squares loses no precision.
    """
    return 2.0 * (sizes * (counts @ x**2) - (counts @ x) ** 2)


def _alpha_batch(sums: _UnitSums, weights: np.ndarray) -> np.ndarray:
    """Alpha for each row of ``weights`` (resamples x pairable units of draw counts); NaN when undefined."""
    counts, sizes = sums.counts, sums.sizes
    scale = 1.0 / (sizes - 1.0)
    pooled = weights @ counts  # resamples x values
    total = pooled.sum(axis=1)
    if sums.level == "nominal":
        observed = weights @ (scale * (sizes**2 - (counts**2).sum(axis=1)))
        expected = total**2 - (pooled**2).sum(axis=1)
    elif sums.level == "interval":
        observed = weights @ (scale * _squared_spread(counts, sizes, sums.values))
        expected = _squared_spread(pooled, total, sums.values)
    elif sums.level == "ordinal":
        mid_ranks = np.cumsum(pooled, axis=1) - pooled / 2.0  # resamples x values
        mid_ranks -= ((pooled * mid_ranks).sum(axis=1) / total)[:, None]  # centred: see _squared_spread
        # sum_u w_u s_u (m_u sum_c n_uc x_c^2 - (sum_c n_uc x_c)^2), x = this resample's mid-ranks
        first = ((weights @ ((scale * sizes)[:, None] * counts)) * mid_ranks**2).sum(axis=1)
        if sums.coincidences is not None:  # resampled coincidence matrices: one matrix product
            n_values = counts.shape[1]
            table = (weights @ sums.coincidences).reshape(-1, n_values, n_values)
            second = np.einsum("bc,bck,bk->b", mid_ranks, table, mid_ranks)
        else:  # many values: per-unit projections instead of values^2 per unit
            second = (weights * (scale[:, None] * (counts @ mid_ranks.T) ** 2).T).sum(axis=1)
        observed = 2.0 * (first - second)
        expected = 2.0 * (total * (pooled * mid_ranks**2).sum(axis=1) - (pooled * mid_ranks).sum(axis=1) ** 2)
    else:  # ratio
        v = sums.values
        plus = v[:, None] + v[None, :]
        d2 = np.divide((v[:, None] - v[None, :]) ** 2, plus**2, out=np.zeros_like(plus), where=plus != 0)
        observed = weights @ (scale * ((counts @ d2) * counts).sum(axis=1))
        expected = ((pooled @ d2) * pooled).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (total - 1.0) * observed / expected
    return np.where(expected > 0, alpha, np.nan)


def alpha_from_unit_sums(ratings: Ratings, level: str) -> float:
    """Alpha by this module's own algebra (every unit drawn once); the tests hold it to the package."""
    sums = _unit_sums(ratings, level)
    return float(_alpha_batch(sums, np.ones((1, sums.counts.shape[0])))[0])


def krippendorff_alpha(
    ratings: Ratings, level: str = "nominal", bootstrap: int = 0, seed: int = 0, confidence: float = 0.95
) -> Estimate:
    """Krippendorff's alpha; with ``bootstrap`` > 0 also a percentile interval over resampled units/groups."""
    import krippendorff

    sums = _unit_sums(ratings, level)
    domain = np.asarray(ratings.values, dtype=np.float64) if ratings.numeric else np.arange(len(ratings.values))
    value = float(
        krippendorff.alpha(value_counts=ratings.value_counts(), value_domain=domain, level_of_measurement=level)  # type: ignore[arg-type]  # a level checked by _unit_sums
    )
    if not np.isfinite(value):
        raise UndefinedStatistic(f"Krippendorff's alpha ({level}) is undefined for these ratings")
    interval = None
    if bootstrap:
        groups = ratings.kept_group_index(sums.pairable)
        interval = percentile_interval(
            lambda w: _alpha_batch(sums, w), sums.counts.shape[0], bootstrap, seed, confidence, groups
        )
    return Estimate(
        statistic="krippendorff_alpha",
        label=f"Krippendorff's alpha ({level})",
        value=value,
        units=int(sums.pairable.size),
        coders=len(ratings.coders),
        ratings=ratings.n_ratings,
        params={"level": level},
        interval=interval,
    )


def coincidence_matrix(ratings: Ratings) -> np.ndarray:
    """Krippendorff's coincidence matrix (values x values) over pairable units: the disagreement matrix.

    Entry (c, k) counts pairable value pairs c-k, each unit weighted 1 / (m_u - 1), so row sums are the
    number of pairable values of each kind.
    """
    counts = ratings.value_counts().astype(np.float64)
    sizes = counts.sum(axis=1)
    pairable = sizes >= 2
    counts, sizes = counts[pairable], sizes[pairable]
    scale = 1.0 / (sizes - 1.0)
    return (counts * scale[:, None]).T @ counts - np.diag((counts * scale[:, None]).sum(axis=0))


def specific_agreement(coincidences: np.ndarray) -> np.ndarray:
    """Per value, the share of its pairable occurrences matched by the same value (NaN for unused values).

    With two coders this is the positive specific agreement 2 n_cc / (n_c. + n_.c).
    """
    totals = coincidences.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(totals > 0, np.diag(coincidences) / totals, np.nan)
