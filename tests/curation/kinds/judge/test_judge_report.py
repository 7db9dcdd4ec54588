"""The judge-vs-human report against figures computed by hand (Judge Anything §3.1, App. B.5)."""

from __future__ import annotations

import math

import pytest

from curation.errors import ValidationFailed
from curation.kinds.judge.report import ReportSettings, judge_report, pair_report, score_report
from curation.kinds.judge.schema import JudgeOutputLine, PairAnnotation, PairSample, ScoreAnnotation, ScoreSample

NO_BOOTSTRAP = ReportSettings(bootstrap=0)


def score_fixture():
    pairs = {"s1": "text->text", "s2": "text->text", "s3": "text->text", "s4": "image->text", "s5": "image->text"}
    samples = [ScoreSample(id=s, task=f"t{s}", response=f"r{s}", system="x", modality_pair=p) for s, p in pairs.items()]
    human = {"a": [5, 3, 1, 4, 2], "b": [4, 3, 2, 4, 1]}  # means 4.5 3 1.5 4 1.5
    annotations = [
        ScoreAnnotation(sample=f"s{i + 1}", annotator=who, scores={"overall": v, "clarity": 3})
        for who, values in human.items()
        for i, v in enumerate(values)
    ]
    j1 = [[5, 4, 5], [3], [2, 2], [3, 4], [1]]  # means 14/3 3 2 3.5 1
    j2 = [[4], [4], [1], [5], [2]]
    outputs = [
        JudgeOutputLine(sample=f"s{i + 1}", judge=name, scores={"overall": given})
        for name, rows in (("j1", j1), ("j2", j2))
        for i, given in enumerate(rows)
    ]
    return samples, annotations, outputs


def test_score_figures_match_a_hand_computation():
    report = score_report(*score_fixture(), NO_BOOTSTRAP)
    j1 = report["metrics"]["j1"]["all"]["overall"]
    # human 4.5 3 1.5 4 1.5; j1 14/3 3 2 3.5 1: |diff| 1/6 0 .5 .5 .5
    assert j1["n"] == 5
    assert j1["mae"]["value"] == pytest.approx((1 / 6 + 1.5) / 5)
    assert j1["exact_match"]["value"] == pytest.approx(4 / 5)  # rounded half up: 5 3 2 4 2 vs 5 3 2 4 1
    j2 = report["metrics"]["j2"]["all"]["overall"]
    # deviations from the means 2.9 and 3.2: products sum 8.1, squares 7.7 and 10.8
    assert j2["pearson"]["value"] == pytest.approx(8.1 / math.sqrt(7.7 * 10.8))
    # mid-ranks 5 3 1.5 4 1.5 and 3.5 3.5 1 5 2: products 7.5, squares 9.5 and 9.5
    assert j2["spearman"]["value"] == pytest.approx(7.5 / 9.5)
    assert j2["mae"]["value"] == pytest.approx(3.5 / 5)
    assert j2["exact_match"]["value"] == pytest.approx(1 / 5)
    fusion = report["metrics"]["fusion"]["all"]["overall"]  # mean of judges: 13/3 3.5 1.5 4.25 1.5
    assert fusion["mae"]["value"] == pytest.approx((1 / 6 + 0.5 + 0 + 0.25 + 0) / 5)
    assert fusion["spearman"]["value"] == pytest.approx(1.0)
    assert report["judges"] == ["j1", "j2"]


def test_score_figures_per_modality_pair_and_undefined_correlations():
    report = score_report(*score_fixture(), NO_BOOTSTRAP)
    image = report["metrics"]["j2"]["by_modality_pair"]["image->text"]["overall"]
    assert image["n"] == 2 and image["mae"]["value"] == pytest.approx((1 + 0.5) / 2)
    assert image["pearson"]["value"] == pytest.approx(1.0)  # two points always lie on a line
    # the judges gave no clarity scores: no cell; people all said 3: their alpha is undefined, not NaN
    assert "clarity" not in report["metrics"]["j1"]["all"]
    assert report["human_agreement"]["clarity"]["value"] is None
    assert "undefined" in report["human_agreement"]["clarity"]
    assert -1 <= report["human_agreement"]["overall"]["value"] <= 1


def test_bootstrap_intervals_are_seeded_and_hold_the_point():
    data = score_fixture()
    a = score_report(*data, ReportSettings(bootstrap=300, seed=7))
    b = score_report(*data, ReportSettings(bootstrap=300, seed=7))
    mae = a["metrics"]["j1"]["all"]["overall"]["mae"]
    assert mae == b["metrics"]["j1"]["all"]["overall"]["mae"]
    low, high = mae["ci"]
    assert low <= mae["value"] <= high and low < high


def pair_fixture():
    systems = {"p1": ("A", "B"), "p2": ("B", "C"), "p3": ("C", "A"), "p4": ("A", "C")}
    samples = [
        PairSample(
            id=p, task=f"t{p}", first=f"{p}1", second=f"{p}2", first_system=a, second_system=b,
            modality_pair="text->image", swapped=False,
        )
        for p, (a, b) in systems.items()
    ]  # fmt: skip
    human = {
        "p1": ["first", "first", "second"],  # first
        "p2": ["second", "tie", "second"],  # second
        "p3": ["tie", "tie", "first"],  # tie
        "p4": ["first", "second", "tie"],  # no majority: tie
    }
    annotations = [
        PairAnnotation(sample=p, annotator=f"h{k}", choices={"overall": c})
        for p, given in human.items()
        for k, c in enumerate(given)
    ]
    judged = {
        "j1": {"p1": ["first", "first", "tie"], "p2": ["first"], "p3": ["tie"], "p4": ["second", "first"]},
        "j2": {"p1": ["second"], "p2": ["second"], "p3": ["first"], "p4": ["tie"]},
    }
    outputs = [
        JudgeOutputLine(sample=p, judge=j, choices={"overall": given})
        for j, rows in judged.items()
        for p, given in rows.items()
    ]
    return samples, annotations, outputs


def test_pair_accuracy_with_and_without_ties_and_fusion_by_majority():
    report = pair_report(*pair_fixture(), NO_BOOTSTRAP)
    assert report["human_choices"]["overall"] == {"first": 1, "second": 1, "tie": 2}
    j1 = report["metrics"]["j1"]["all"]["overall"]  # first first tie tie vs first second tie tie
    assert j1["accuracy_with_ties"]["value"] == pytest.approx(3 / 4)
    assert j1["accuracy_without_ties"]["value"] == pytest.approx(1 / 2)
    j2 = report["metrics"]["j2"]["all"]["overall"]  # second second first tie
    assert j2["accuracy_with_ties"]["value"] == pytest.approx(2 / 4)
    assert j2["accuracy_without_ties"]["value"] == pytest.approx(1 / 2)
    fusion = report["metrics"]["fusion"]["all"]["overall"]  # tie tie tie tie
    assert fusion["accuracy_with_ties"]["value"] == pytest.approx(2 / 4)
    assert fusion["accuracy_without_ties"]["value"] == pytest.approx(0.0)


def elo_by_hand(matches):
    rating = {"A": 1000.0, "B": 1000.0, "C": 1000.0}
    for a, b, s_a in matches:
        p_a = 1 / (1 + 10 ** ((rating[b] - rating[a]) / 400))  # App. B.5 (1)
        p_b = 1 / (1 + 10 ** ((rating[a] - rating[b]) / 400))  # (2)
        rating[a], rating[b] = rating[a] + 32 * (s_a - p_a), rating[b] + 32 * ((1 - s_a) - p_b)  # (3), (4)
    return rating


def test_arena_from_people_and_judges_side_by_side():
    report = pair_report(*pair_fixture(), NO_BOOTSTRAP)
    elo = report["arena"]["elo"]
    # people, in sample order: A beats B, C beats B, C ties A, A ties C
    expected = elo_by_hand([("A", "B", 1.0), ("B", "C", 0.0), ("C", "A", 0.5), ("A", "C", 0.5)])
    assert elo["human"] == pytest.approx(expected)
    assert elo["j2"] == pytest.approx(elo_by_hand([("A", "B", 0.0), ("B", "C", 0.0), ("C", "A", 1.0), ("A", "C", 0.5)]))
    assert set(elo) == {"human", "j1", "j2", "fusion"}
    # B never wins in people's choices: its Bradley–Terry strength is unbounded, said in words
    assert "undefined" in report["arena"]["bradley_terry"]["human"]


def test_unknown_samples_and_mixed_outputs_are_refused():
    samples, annotations, outputs = score_fixture()
    stray = JudgeOutputLine(sample="nope", judge="j1", scores={"overall": [3]})
    with pytest.raises(ValidationFailed, match="nope"):
        judge_report(samples, annotations, [], [], [*outputs, stray], NO_BOOTSTRAP)
    with pytest.raises(ValidationFailed, match="unknown score sample"):
        score_report(
            samples, [*annotations, ScoreAnnotation(sample="zz", annotator="a", scores={"overall": 1})], outputs
        )


def test_the_whole_report_has_both_parts():
    s_samples, s_annotations, s_outputs = score_fixture()
    p_samples, p_annotations, p_outputs = pair_fixture()
    report = judge_report(s_samples, s_annotations, p_samples, p_annotations, [*s_outputs, *p_outputs], NO_BOOTSTRAP)
    assert report["scores"]["samples"] == 5 and report["pairs"]["samples"] == 4
    assert report["settings"]["judge_scores"] == "mean"
