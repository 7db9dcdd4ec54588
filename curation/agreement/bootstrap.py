"""Bootstrap confidence intervals that resample units (or whole groups) by weighting, not by copying.

A resample is a row of counts: how many times each unit was drawn. Every statistic here is a function
of per-unit sums, so a whole batch of resamples is one matrix product of the count matrix with the
per-unit contributions, computed once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from .errors import UndefinedStatistic

BATCH_CELLS = 1_000_000
"""Resamples are drawn in batches of about this many (resample, unit) cells, to stay in cache."""


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval; ``undefined`` counts resamples where the statistic had no value."""

    low: float
    high: float
    confidence: float
    resamples: int
    seed: int
    by: str
    undefined: int = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "resamples": self.resamples,
            "seed": self.seed,
            "by": self.by,
            "undefined_resamples": self.undefined,
        }


def resample_counts(
    n_units: int,
    resamples: int,
    rng: np.random.Generator,
    groups: np.ndarray | None = None,
) -> Iterator[np.ndarray]:
    """Yield batches of (resamples x units) draw counts; a grouped unit counts as often as its group."""
    n_draw = n_units if groups is None else int(groups.max()) + 1
    batch = max(1, BATCH_CELLS // max(n_draw, 1))
    done = 0
    while done < resamples:
        size = min(batch, resamples - done)
        draws = rng.integers(0, n_draw, size=(size, n_draw), dtype=np.int64)
        offsets = np.arange(size, dtype=np.int64)[:, None] * n_draw
        counts = np.bincount((draws + offsets).ravel(), minlength=size * n_draw).reshape(size, n_draw)
        yield counts.astype(np.float64) if groups is None else counts[:, groups].astype(np.float64)
        done += size


def percentile_interval(
    statistic: Callable[[np.ndarray], np.ndarray],
    n_units: int,
    resamples: int,
    seed: int,
    confidence: float = 0.95,
    groups: np.ndarray | None = None,
) -> Interval:
    """Percentile interval of ``statistic`` (count matrix -> one value per resample, NaN when undefined)."""
    if resamples < 1:
        raise ValueError("the number of bootstrap resamples must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("the confidence level must lie strictly between 0 and 1")
    rng = np.random.default_rng(seed)
    values = np.concatenate([statistic(w) for w in resample_counts(n_units, resamples, rng, groups)])
    defined = values[np.isfinite(values)]
    if defined.size == 0:
        raise UndefinedStatistic(
            f"the statistic is undefined in all {resamples} bootstrap resamples; "
            "there are too few units (or groups) to resample"
        )
    tail = (1 - confidence) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return Interval(
        low=float(low),
        high=float(high),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        by="unit" if groups is None else "group",
        undefined=int(values.size - defined.size),
    )
