"""Choice rates (Table 6) and rubric-versus-overall correlation maps (Fig. 5) against figures computed by hand
(issue 46, row 4), and the heat map written as a PNG."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from curation.kinds.judge.report import ReportSettings, pair_report, score_report
from curation.kinds.judge.report_plots import write_report_plots
from curation.kinds.judge.schema import JudgeOutputLine, PairAnnotation, PairSample, ScoreAnnotation, ScoreSample

PAIRS = ("text->text", "text->text", "image->text", "image->text")
HUMAN = {"overall": ["first", "second", "tie", "first"], "relevance": ["first", "first", "second", "tie"]}
JUDGE = {"overall": ["first", "second", "first", "first"], "relevance": ["first", "second", "first", "first"]}


def pair_case():
    samples = [
        PairSample(id=f"p{i}", task=f"t{i}", first=f"r{i}a", second=f"r{i}b", first_system="A", second_system="B",
                   modality_pair=pair, swapped=False)
        for i, pair in enumerate(PAIRS)
    ]  # fmt: skip
    annotations = [
        PairAnnotation(sample=f"p{i}", annotator="h0", choices={c: HUMAN[c][i] for c in HUMAN}) for i in range(4)
    ]
    outputs = [
        JudgeOutputLine(sample=f"p{i}", judge="j1-rubric", choices={c: [JUDGE[c][i]] for c in JUDGE}) for i in range(4)
    ]
    outputs += [JudgeOutputLine(sample=f"p{i}", judge="j2-overall", choices={"overall": ["tie"]}) for i in range(4)]
    return samples, annotations, outputs


def test_choice_rates_beside_the_peoples_match_a_hand_count() -> None:
    report = pair_report(*pair_case(), ReportSettings(bootstrap=0))
    rates = report["choice_rates"]
    assert rates["human"]["all"]["overall"] == {"n": 4, "first": 0.5, "second": 0.25, "tie": 0.25}
    assert rates["j1-rubric"]["all"]["overall"] == {"n": 4, "first": 0.75, "second": 0.25, "tie": 0.0}
    assert rates["j2-overall"]["all"]["overall"] == {"n": 4, "first": 0.0, "second": 0.0, "tie": 1.0}
    assert "relevance" not in rates["j2-overall"]["all"], "an overall-only judge gave no rubric choice"
    # per modality pair: image->text is samples 2 and 3 (people: tie, first; relevance: second, tie)
    image = rates["human"]["by_modality_pair"]["image->text"]
    assert image["overall"] == {"n": 2, "first": 0.5, "second": 0.0, "tie": 0.5}
    assert image["relevance"] == {"n": 2, "first": 0.0, "second": 0.5, "tie": 0.5}


def test_the_rubric_map_matches_a_hand_correlation() -> None:
    report = pair_report(*pair_case(), ReportSettings(bootstrap=0))
    maps = report["correlation_maps"]
    # people: overall +1 -1 0 +1, relevance +1 +1 -1 0 (means 1/4); deviations' products sum -1/4, squares 11/4
    human = maps["human"]
    assert human["criteria"] == ["overall", "relevance"]
    assert human["pearson"][0][1] == pytest.approx(-1 / 11, abs=1e-15)
    assert human["pearson"][1][0] == human["pearson"][0][1] and human["pearson"][0][0] == pytest.approx(1.0)
    assert human["n"] == [[4, 4], [4, 4]]
    assert maps["j1-rubric"]["pearson"][0][1] == pytest.approx(1.0), "the judge repeats its overall verdict"
    assert "j2-overall" not in maps, "one criterion makes no map"


def test_score_maps_and_an_undefined_cell() -> None:
    samples = [ScoreSample(id=f"s{i}", task="t", response=f"r{i}", system="x", modality_pair="text->text")
               for i in range(3)]  # fmt: skip
    overall, clarity = [5, 3, 1], [4, 4, 1]
    annotations = [
        ScoreAnnotation(sample=f"s{i}", annotator="h0", scores={"overall": overall[i], "clarity": clarity[i]})
        for i in range(3)
    ]
    outputs = [
        JudgeOutputLine(sample=f"s{i}", judge="j-rubric", scores={"overall": [overall[i]], "clarity": [2]})
        for i in range(3)
    ]
    maps = score_report(samples, annotations, outputs, ReportSettings(bootstrap=0))["correlation_maps"]
    # deviations 2 0 -2 and 1 1 -2: products 6, squares 8 and 6
    assert maps["human"]["pearson"][0][1] == pytest.approx(6 / (8 * 6) ** 0.5, abs=1e-15)
    assert maps["j-rubric"]["pearson"][0][1] is None, "a constant clarity score has no correlation"
    assert maps["j-rubric"]["pearson"][1][1] is None


def test_the_heat_map_and_the_rates_are_written_as_images(tmp_path: Path) -> None:
    report = {"pairs": pair_report(*pair_case(), ReportSettings(bootstrap=0))}
    written = write_report_plots(report, tmp_path / "plots")
    assert [p.name for p in written] == ["pairs_rubric_correlation.png", "pair_choice_rates.png"]
    for path in written:
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width > 200
