import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from curation.agreement import (
    UndefinedStatistic,
    cohen_kappa,
    fleiss_kappa,
    ratings_from_matrix,
    ratings_from_rows,
    raw_agreement,
)
from curation.agreement.kappa import (
    _cohen_batch,
    _fleiss_batch,
    _fleiss_counts,
    _pairs,
    cohen_kappa_from_pairs,
)
from curation.errors import ValidationFailed


@pytest.mark.parametrize(
    ("table", "published"),
    [
        # Wikipedia, "Cohen's kappa", worked example: 50 proposals read by A and B.
        ([[20, 5], [10, 15]], 0.40),
        # Wikipedia, same agreement (60%) with different marginals: kappa 0.1304 and 0.2593.
        ([[45, 15], [25, 15]], 0.1304),
        ([[25, 35], [5, 35]], 0.2593),
    ],
)
def test_cohen_kappa_reproduces_published_two_by_two_tables(confusion_rows, table, published):
    ratings = ratings_from_rows(confusion_rows(table, ["yes", "no"]))
    estimate = cohen_kappa(ratings)
    assert round(estimate.value, 4) == published
    assert estimate.units == sum(map(sum, table))


def test_cohen_kappa_three_by_three_by_hand_and_by_sklearn(confusion_rows):
    table = np.array([[22, 3, 1], [4, 18, 5], [2, 6, 19]])
    n = table.sum()
    observed = np.trace(table) / n
    chance = (table.sum(axis=1) * table.sum(axis=0)).sum() / n**2
    ratings = ratings_from_rows(confusion_rows(table.tolist(), [1, 2, 3]))
    assert cohen_kappa(ratings).value == pytest.approx((observed - chance) / (1 - chance))
    assert raw_agreement(ratings) == pytest.approx(observed)
    steps = np.abs(np.subtract.outer(np.arange(3), np.arange(3)))
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    for weights, w in (("linear", steps), ("quadratic", steps**2)):
        by_hand = 1 - (w * table).sum() / (w * expected).sum()
        assert cohen_kappa(ratings, weights).value == pytest.approx(by_hand)
        assert cohen_kappa_from_pairs(ratings, weights) == pytest.approx(by_hand)


def test_integer_scales_keep_their_gaps_in_weighted_kappa():
    ratings = ratings_from_matrix([[1, 2, 4, 4, 1], [2, 2, 4, 1, 1]])
    a, b = [1, 2, 4, 4, 1], [2, 2, 4, 1, 1]
    expected = cohen_kappa_score(a, b, labels=[1, 2, 3, 4], weights="linear")
    assert cohen_kappa(ratings, "linear").value == pytest.approx(expected)
    assert expected != pytest.approx(cohen_kappa_score(a, b, weights="linear"))


@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_weighted_resample_equals_sklearn_on_copied_units(weights):
    rng = np.random.default_rng(2)
    ratings = ratings_from_matrix(rng.integers(1, 5, size=(2, 40)).tolist())
    pairs = _pairs(ratings)
    draws = rng.integers(0, 3, size=(5, pairs.units.size)).astype(float)
    for row, fast in zip(draws, _cohen_batch(pairs, weights, draws), strict=True):
        repeat = row.astype(int)
        slow = cohen_kappa_score(
            np.repeat(pairs.first, repeat),
            np.repeat(pairs.second, repeat),
            labels=np.arange(4),
            weights=None if weights == "none" else weights,
        )
        assert fast == pytest.approx(slow, abs=1e-12)


def test_cohen_kappa_bootstrap_is_seeded(confusion_rows):
    ratings = ratings_from_rows(confusion_rows([[20, 5], [10, 15]], ["yes", "no"]))
    first = cohen_kappa(ratings, bootstrap=400, seed=4)
    assert first.interval == cohen_kappa(ratings, bootstrap=400, seed=4).interval
    assert first.interval.low < 0.4 < first.interval.high


def test_cohen_kappa_uses_only_units_both_coders_rated():
    ratings = ratings_from_matrix([[1, 2, 1, None, 2], [1, 2, 2, 1, None]])
    estimate = cohen_kappa(ratings)
    assert estimate.units == 3
    assert estimate.value == pytest.approx(cohen_kappa_score([1, 2, 1], [1, 2, 2]))


def test_cohen_kappa_needs_exactly_two_coders():
    with pytest.raises(UndefinedStatistic, match="exactly two coders; the ratings have 3"):
        cohen_kappa(ratings_from_matrix([[1, 2], [1, 2], [2, 2]]))
    with pytest.raises(UndefinedStatistic, match="exactly two coders; the ratings have 1"):
        cohen_kappa(ratings_from_matrix([[1, 2]]))


def test_cohen_kappa_without_overlap_or_variation_is_undefined():
    with pytest.raises(UndefinedStatistic, match="no unit was rated by both coders"):
        cohen_kappa(ratings_from_matrix([[1, None], [None, 2]]))
    with pytest.raises(UndefinedStatistic, match="same single category to every unit"):
        cohen_kappa(ratings_from_matrix([[3, 3, 3], [3, 3, 3]]))


def test_weighted_kappa_refuses_text_categories():
    with pytest.raises(ValidationFailed, match="ordered numeric scale"):
        cohen_kappa(ratings_from_matrix([["a", "b"], ["a", "a"]]), "linear")


def test_weighted_kappa_names_the_first_text_value_with_file_and_line():
    rows = [(2, {"unit": "u1", "coder": "A", "value": "3"}), (3, {"unit": "u1", "coder": "B", "value": "high"})]
    with pytest.raises(ValidationFailed) as caught:
        cohen_kappa(ratings_from_rows(rows, file="r.csv"), "quadratic")
    assert (
        str(caught.value.problems[0])
        == "r.csv:3: value: 'high' is not a number; weighted kappa needs an ordered numeric scale"
    )


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_kappa_is_invariant_under_affine_rescaling_of_the_values(seed, weights):
    """Property: kappa on x and on a*x + b agree for random data, a != 0 (both signs) and any offset."""
    rng = np.random.default_rng(seed)
    codes = np.sort(rng.choice(rng.integers(10, 500), size=rng.integers(2, 7), replace=False)).astype(float)
    table = rng.choice(codes, size=(2, int(rng.integers(6, 60))))
    table[1, : table.shape[1] // 2] = table[0, : table.shape[1] // 2]  # some agreement
    scale = float(rng.uniform(0.001, 1000.0)) * float(rng.choice([-1.0, 1.0]))
    offset = float(rng.uniform(-1e4, 1e4))
    try:
        before = cohen_kappa(ratings_from_matrix(table.tolist()), weights).value
    except UndefinedStatistic:
        with pytest.raises(UndefinedStatistic):
            cohen_kappa(ratings_from_matrix((table * scale + offset).tolist()), weights)
        return
    after = cohen_kappa(ratings_from_matrix((table * scale + offset).tolist()), weights).value
    assert after == pytest.approx(before, abs=1e-9)


@pytest.mark.parametrize(
    ("codes", "weights"),
    [
        ((0, 1, 100), "linear"),
        ((0, 1, 101), "linear"),
        ((0, 1, 100), "quadratic"),
        ((0.5, 1.5, 2.25), "linear"),
        ((-7, 0, 1000), "quadratic"),
    ],
)
def test_weighted_kappa_weighs_by_value_distance_on_every_numeric_scale(codes, weights):
    first = [codes[i] for i in (0, 0, 1, 2, 2, 1, 0, 2)]
    second = [codes[i] for i in (0, 1, 1, 2, 0, 2, 0, 1)]
    distance = np.abs(np.subtract.outer(np.asarray(codes, float), np.asarray(codes, float)))
    w = distance if weights == "linear" else distance**2
    index = {c: i for i, c in enumerate(codes)}
    observed = np.zeros((3, 3))
    for a, b in zip(first, second, strict=True):
        observed[index[a], index[b]] += 1
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    by_hand = 1 - (w * observed).sum() / (w * expected).sum()
    assert cohen_kappa(ratings_from_matrix([first, second]), weights).value == pytest.approx(by_hand)


def test_codes_0_1_100_and_0_1_101_now_differ_only_by_their_gap():
    """The old rule switched from value gaps to ranks past a span of 100 (linear kappa 0.052 vs 0.286)."""
    pattern_a, pattern_b = (0, 0, 1, 2, 2, 1, 0, 2, 1, 0), (0, 1, 1, 2, 0, 2, 0, 1, 1, 2)
    values = []
    for codes in ((0, 1, 100), (0, 1, 101)):
        matrix = [[codes[i] for i in pattern_a], [codes[i] for i in pattern_b]]
        values.append(cohen_kappa(ratings_from_matrix(matrix), "linear").value)
    assert values[0] == pytest.approx(values[1], abs=0.01)


def test_fleiss_kappa_reproduces_fleiss_1971(fleiss_1971_rows):
    estimate = fleiss_kappa(ratings_from_rows(fleiss_1971_rows))
    assert round(estimate.value, 3) == 0.210
    assert estimate.units == 10
    assert estimate.params["raters_per_unit"] == 14


def test_fleiss_kappa_with_two_raters_matches_the_direct_formula():
    a, b = [1, 2, 3, 1, 2, 3, 1, 1], [1, 2, 3, 2, 2, 1, 1, 3]
    ratings = ratings_from_matrix([a, b])
    pooled = np.bincount(a + b, minlength=4)[1:] / 16
    observed = np.mean(np.asarray(a) == np.asarray(b))
    assert fleiss_kappa(ratings).value == pytest.approx((observed - (pooled**2).sum()) / (1 - (pooled**2).sum()))


def test_fleiss_weighted_resample_equals_recomputing(fleiss_1971_rows):
    counts = _fleiss_counts(ratings_from_rows(fleiss_1971_rows))
    draws = np.random.default_rng(8).integers(0, 3, size=(4, 10)).astype(float)
    draws[:, 0] += 1  # no empty resample
    for row, fast in zip(draws, _fleiss_batch(counts, draws), strict=True):
        copied = np.repeat(counts, row.astype(int), axis=0)
        assert fast == pytest.approx(_fleiss_batch(copied, np.ones((1, copied.shape[0])))[0])


def test_fleiss_kappa_bootstrap_brackets_the_estimate(fleiss_1971_rows):
    estimate = fleiss_kappa(ratings_from_rows(fleiss_1971_rows), bootstrap=500, seed=0)
    assert estimate.interval.low < estimate.value < estimate.interval.high


def test_fleiss_kappa_refuses_unequal_numbers_of_ratings():
    with pytest.raises(UndefinedStatistic, match="same number of ratings on every unit; these units have 2, 3"):
        fleiss_kappa(ratings_from_matrix([[1, 2], [1, 2], [1, None]]))


def test_fleiss_kappa_without_variation_is_undefined():
    with pytest.raises(UndefinedStatistic, match="every rating is in one category"):
        fleiss_kappa(ratings_from_matrix([[1, 1], [1, 1], [1, 1]]))
