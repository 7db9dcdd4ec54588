import numpy as np
import pytest

from curation.agreement import UndefinedStatistic
from curation.agreement.bootstrap import percentile_interval, resample_counts


def test_each_resample_draws_as_many_units_as_there_are():
    batches = list(resample_counts(7, 1000, np.random.default_rng(0)))
    counts = np.concatenate(batches)
    assert counts.shape == (1000, 7)
    assert (counts.sum(axis=1) == 7).all()
    assert counts.mean() == pytest.approx(1.0, abs=0.05)


def test_grouped_units_are_drawn_together():
    groups = np.array([0, 0, 1, 1, 1, 2])
    counts = np.concatenate(list(resample_counts(6, 200, np.random.default_rng(1), groups)))
    assert (counts[:, 0] == counts[:, 1]).all()
    assert (counts[:, 2] == counts[:, 3]).all() and (counts[:, 3] == counts[:, 4]).all()
    assert (counts[:, [0, 2, 5]].sum(axis=1) == 3).all()  # three groups drawn per resample


def test_percentile_interval_of_a_mean_matches_numpy():
    values = np.random.default_rng(2).normal(size=50)

    def mean(draws):
        return draws @ values / draws.sum(axis=1)

    interval = percentile_interval(mean, 50, 2000, seed=5, confidence=0.9)
    assert interval.low < values.mean() < interval.high
    rng = np.random.default_rng(5)
    direct = np.concatenate([mean(d) for d in resample_counts(50, 2000, rng)])
    assert (interval.low, interval.high) == tuple(np.quantile(direct, [0.05, 0.95]))


def test_undefined_resamples_are_counted_not_averaged():
    def sometimes(draws):
        return np.where(draws[:, 0] > 0, 1.0, np.nan)

    interval = percentile_interval(sometimes, 3, 300, seed=0)
    assert 0 < interval.undefined < 300
    assert interval.low == interval.high == 1.0


def test_always_undefined_raises():
    with pytest.raises(UndefinedStatistic, match="undefined in all 10 bootstrap resamples"):
        percentile_interval(lambda d: np.full(d.shape[0], np.nan), 3, 10, seed=0)
