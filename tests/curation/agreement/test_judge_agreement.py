import numpy as np
import pytest
from scipy import stats

from curation.agreement import (
    PairRow,
    ScoreRow,
    UndefinedStatistic,
    bradley_terry,
    elo_ratings,
    pair_accuracy,
    score_agreement,
    score_agreement_by_criterion,
)
from curation.errors import ValidationFailed


def _score_rows(criterion="overall", seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for system, quality in zip("ABCDEF", [1.5, 2.0, 2.5, 3.5, 4.0, 4.5], strict=True):
        for item in range(8):
            human = float(np.clip(round(quality + rng.normal(0, 0.7)), 1, 5))
            judge = float(np.clip(round(quality + rng.normal(0, 1.0)), 1, 5))
            rows.append(ScoreRow(system, f"i{item}", criterion, human, judge))
    return rows


def test_system_level_correlations_match_scipy():
    rows = _score_rows()
    report = score_agreement(rows)
    systems = sorted({r.system for r in rows})
    human = [np.mean([r.human for r in rows if r.system == s]) for s in systems]
    judge = [np.mean([r.judge for r in rows if r.system == s]) for s in systems]
    assert report.systems == 6
    assert report.spearman.value == pytest.approx(stats.spearmanr(human, judge).statistic)
    assert report.spearman.p_value == pytest.approx(stats.spearmanr(human, judge).pvalue)
    assert report.kendall.value == pytest.approx(stats.kendalltau(human, judge, variant="b").statistic)
    assert report.pearson.value == pytest.approx(stats.pearsonr(human, judge).statistic)
    assert report.pearson.p_value == pytest.approx(stats.pearsonr(human, judge).pvalue)
    assert report.mean_absolute_difference == pytest.approx(np.mean([abs(r.human - r.judge) for r in rows]))


def test_agreement_by_criterion_adds_an_overall_entry():
    rows = _score_rows("relevance", 1) + _score_rows("clarity", 2)
    report = score_agreement_by_criterion(rows)
    assert sorted(report) == ["all", "clarity", "relevance"]
    assert report["clarity"].rows == 48
    assert report["all"].rows == 96


def test_correlation_needs_three_systems_and_variation():
    two = [ScoreRow(s, "i", "c", h, j) for s, h, j in (("A", 1, 2), ("B", 3, 4))]
    with pytest.raises(UndefinedStatistic, match="at least three systems; there are 2"):
        score_agreement(two)
    flat = [ScoreRow(s, "i", "c", 3, j) for s, j in (("A", 1), ("B", 2), ("C", 3))]
    with pytest.raises(UndefinedStatistic, match="same mean human score"):
        score_agreement(flat)


def test_pair_accuracy_with_and_without_ties():
    rows = [
        PairRow("i1", "x", "y", "A", "A"),
        PairRow("i2", "x", "y", "B", "A"),
        PairRow("i3", "x", "z", "tie", "tie"),
        PairRow("i4", "y", "z", "tie", "B"),
    ]
    accuracy = pair_accuracy(rows)
    assert accuracy.with_ties == pytest.approx(0.5)
    assert accuracy.without_ties == pytest.approx(0.5)
    assert accuracy.human_ties == 2
    only_ties = pair_accuracy(rows[2:])
    assert only_ties.without_ties is None
    assert only_ties.with_ties == pytest.approx(0.5)


def test_pair_outcomes_are_validated():
    with pytest.raises(ValidationFailed, match="'left' is not one of A, B, tie"):
        pair_accuracy([PairRow("i", "x", "y", "A", "left")])


def test_elo_follows_judge_anything_b5():
    # Equal ratings: expected score 0.5, so a win moves each side by K/2 = 16.
    ratings = elo_ratings([PairRow("i1", "x", "y", "A")])
    assert ratings == {"x": pytest.approx(1016.0), "y": pytest.approx(984.0)}
    # The second match starts from 1016 vs 984; a tie moves x down by 32 * (0.5 - P_x).
    p_x = 1 / (1 + 10 ** ((984 - 1016) / 400))
    after = elo_ratings([PairRow("i1", "x", "y", "A"), PairRow("i2", "x", "y", "tie")])
    assert after["x"] == pytest.approx(1016 + 32 * (0.5 - p_x))
    assert after["x"] + after["y"] == pytest.approx(2000.0)


def test_elo_can_rate_the_judge_outcomes():
    rows = [PairRow("i1", "x", "y", "A", "B")]
    assert elo_ratings(rows, use_judge=True)["y"] == pytest.approx(1016.0)


def test_bradley_terry_for_two_systems_is_the_win_ratio():
    rows = [PairRow(f"i{k}", "x", "y", "A") for k in range(3)] + [PairRow("i9", "x", "y", "B")]
    strengths = bradley_terry(rows)
    assert strengths["x"] / strengths["y"] == pytest.approx(3.0, rel=1e-6)
    assert sum(strengths.values()) == pytest.approx(1.0)


def test_bradley_terry_solves_the_likelihood_equations():
    rng = np.random.default_rng(4)
    true = {"a": 4.0, "b": 2.0, "c": 1.0, "d": 0.5}
    rows = []
    for k in range(400):
        x, y = rng.choice(list(true), size=2, replace=False)
        outcome = "A" if rng.random() < true[x] / (true[x] + true[y]) else "B"
        rows.append(PairRow(f"i{k}", str(x), str(y), outcome))
    p = bradley_terry(rows)
    for s in true:  # at the MLE, each system's wins equal its expected wins
        wins = sum((r.human == "A") if r.a == s else (r.human == "B") for r in rows if s in (r.a, r.b))
        expected = sum(p[s] / (p[r.a] + p[r.b]) for r in rows if s in (r.a, r.b))
        assert wins == pytest.approx(expected, rel=1e-6)
    assert p["a"] > p["b"] > p["c"] > p["d"]


def test_bradley_terry_is_undefined_when_a_system_never_loses():
    rows = [PairRow("i1", "x", "y", "A"), PairRow("i2", "x", "z", "A"), PairRow("i3", "y", "z", "tie")]
    with pytest.raises(UndefinedStatistic, match="never lose"):
        bradley_terry(rows)
