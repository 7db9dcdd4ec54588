import krippendorff
import numpy as np
import pytest

from curation.agreement import UndefinedStatistic, krippendorff_alpha, ratings_from_matrix, ratings_from_rows
from curation.agreement.alpha import _alpha_batch, _unit_sums, alpha_from_unit_sums
from curation.errors import ValidationFailed


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_reproduces_krippendorff_2011_published_values(krippendorff_2011, krippendorff_2011_alpha, level):
    estimate = krippendorff_alpha(krippendorff_2011, level)
    assert round(estimate.value, 3) == krippendorff_2011_alpha[level]
    assert estimate.units == 11  # unit 12 has a single value and is not pairable
    assert estimate.coders == 4
    assert estimate.ratings == 41


@pytest.mark.parametrize("n_values", [5, 25])  # 25 > MAX_TENSOR_VALUES: the ordinal path without tensors
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_unit_sum_algebra_equals_the_package_on_random_data(level, n_values):
    rng = np.random.default_rng(7)
    table = rng.integers(1, n_values + 1, size=(5, 60)).astype(float)
    table[rng.random(table.shape) < 0.3] = np.nan
    ratings = ratings_from_matrix(table.tolist())
    expected = krippendorff.alpha(reliability_data=table, level_of_measurement=level)
    assert alpha_from_unit_sums(ratings, level) == pytest.approx(expected, abs=1e-12)
    assert krippendorff_alpha(ratings, level).value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_weighted_resample_equals_recomputing_on_copied_units(krippendorff_2011, level):
    sums = _unit_sums(krippendorff_2011, level)
    draws = np.random.default_rng(3).integers(0, 4, size=(6, sums.counts.shape[0])).astype(float)
    fast = _alpha_batch(sums, draws)
    domain = np.asarray(krippendorff_2011.values)
    for row, value in zip(draws, fast, strict=True):
        copied = np.repeat(sums.counts, row.astype(int), axis=0)
        slow = krippendorff.alpha(value_counts=copied, value_domain=domain, level_of_measurement=level)
        assert value == pytest.approx(slow, abs=1e-12)


def test_interval_alpha_keeps_its_precision_far_from_zero(krippendorff_2011_table):
    shifted = [[None if v is None else v + 1e9 for v in row] for row in krippendorff_2011_table]
    ratings = ratings_from_matrix(shifted)
    assert alpha_from_unit_sums(ratings, "interval") == pytest.approx(0.8491071428571428, abs=1e-9)
    assert alpha_from_unit_sums(ratings, "ordinal") == pytest.approx(0.8153875037548814, abs=1e-9)


def test_ordinal_resample_with_many_values_equals_recomputing():
    rng = np.random.default_rng(9)
    ratings = ratings_from_matrix(rng.integers(1, 31, size=(4, 50)).tolist())
    sums = _unit_sums(ratings, "ordinal")
    assert sums.coincidences is None
    draws = rng.integers(0, 3, size=(4, sums.counts.shape[0])).astype(float)
    domain = np.asarray(ratings.values)
    for row, value in zip(draws, _alpha_batch(sums, draws), strict=True):
        copied = np.repeat(sums.counts, row.astype(int), axis=0)
        slow = krippendorff.alpha(value_counts=copied, value_domain=domain, level_of_measurement="ordinal")
        assert value == pytest.approx(slow, abs=1e-12)


def test_bootstrap_is_seeded_and_brackets_the_estimate(krippendorff_2011):
    first = krippendorff_alpha(krippendorff_2011, "interval", bootstrap=300, seed=11)
    again = krippendorff_alpha(krippendorff_2011, "interval", bootstrap=300, seed=11)
    other = krippendorff_alpha(krippendorff_2011, "interval", bootstrap=300, seed=12)
    assert first.interval == again.interval
    assert first.interval != other.interval
    assert first.interval.low < first.value < first.interval.high
    assert first.interval.by == "unit"
    assert first.interval.resamples == 300


def test_bootstrap_resamples_groups_when_units_are_grouped():
    rng = np.random.default_rng(5)
    rows = []
    for unit in range(40):
        truth = rng.integers(1, 4)
        for coder in "ABC":
            value = truth if rng.random() < 0.8 else rng.integers(1, 4)
            rows.append((0, {"unit": f"u{unit}", "coder": coder, "value": int(value), "group": f"g{unit // 4}"}))
    estimate = krippendorff_alpha(ratings_from_rows(rows), "nominal", bootstrap=200, seed=1)
    assert estimate.interval.by == "group"
    assert estimate.interval.low <= estimate.value <= estimate.interval.high


def test_one_coder_is_undefined():
    ratings = ratings_from_matrix([[1, 2, 3]])
    with pytest.raises(UndefinedStatistic, match="at least two coders"):
        krippendorff_alpha(ratings, "nominal")


def test_no_variation_is_undefined():
    ratings = ratings_from_matrix([[2, 2, 2], [2, 2, None]])
    with pytest.raises(UndefinedStatistic, match="every pairable rating is 2 .no variation"):
        krippendorff_alpha(ratings, "interval")


def test_no_pairable_unit_is_undefined():
    ratings = ratings_from_matrix([[1, None, 3], [None, 2, None]])
    with pytest.raises(UndefinedStatistic, match="no unit was rated by two or more coders"):
        krippendorff_alpha(ratings, "ordinal")


def test_everything_missing_is_undefined():
    with pytest.raises(UndefinedStatistic, match="every value is missing"):
        ratings_from_matrix([[None, None], [None, None]])


def test_text_values_need_the_nominal_level():
    ratings = ratings_from_matrix([["low", "high"], ["low", "low"]])
    assert krippendorff_alpha(ratings, "nominal").value == pytest.approx(
        krippendorff.alpha(reliability_data=[[0, 1], [0, 0]], level_of_measurement="nominal")
    )
    with pytest.raises(ValidationFailed, match="'low' is not a number; the ordinal level needs numbers"):
        krippendorff_alpha(ratings, "ordinal")


def test_ratio_level_refuses_negative_values():
    with pytest.raises(ValidationFailed, match="-1 is negative"):
        krippendorff_alpha(ratings_from_matrix([[-1, 2], [1, 2]]), "ratio")


def test_unknown_level_is_refused(krippendorff_2011):
    with pytest.raises(ValidationFailed, match="unknown level 'cardinal'"):
        krippendorff_alpha(krippendorff_2011, "cardinal")
