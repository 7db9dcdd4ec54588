"""Ranking sensitivity (App. C without the flagged transitions; App. F.4 zero-filled against valid-only),
figures worked out by hand on four systems, two judges, four transitions."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from scipy import stats
from typer.testing import CliRunner

from curation.study.agreement import JudgeScore
from curation.study.rubric import CRITERIA
from curation.study.sensitivity import ranking, sensitivity
from curation.study.tables import StoryStudy, StudyJudgeScore
from omnicurate.cli.main import app

T = ["t1", "t2", "t3", "t4"]
GIVEN = {
    # system -> judge -> transition -> the example's score (all four criteria; None: an invalid answer)
    "A": {"j1": {"t1": 8, "t2": 8, "t3": 8, "t4": 2}, "j2": {"t1": 8, "t2": 8, "t3": 8, "t4": 2}},
    "B": {"j1": {"t1": 7, "t2": 7, "t3": 7, "t4": 7}, "j2": {"t1": 5, "t2": 5, "t3": 5, "t4": None}},
    "C": {"j1": {"t1": 6, "t2": 6, "t3": 7, "t4": 10}, "j2": {"t1": 6, "t2": 6, "t3": 7, "t4": 10}},
    "D": {"j1": {"t1": 9, "t2": 9}, "j2": {"t1": 9, "t2": 9}},  # no output for t3, t4
}


def judge_scores() -> list[JudgeScore]:
    return [
        JudgeScore(judge, t, system, "text", None if v is None else dict.fromkeys(CRITERIA, v))
        for system, judges in GIVEN.items()
        for judge, scores in judges.items()
        for t, v in scores.items()
    ]


def test_figures_by_hand() -> None:
    report = sensitivity(judge_scores(), ["text"], T, ["A", "B", "C", "D"], excluded=["t4"])
    # valid-only: A (6.5+6.5)/2; B j1 7, j2 15/3=5 -> 6; C 29/4; D 9
    assert report["valid_only"] == {"A": 6.5, "B": 6.0, "C": 7.25, "D": 9.0}
    without = report["without"]
    # without t4: A 8, B 6, C 19/3, D 9 -> D A C B; before D C A B
    assert [(r["system"], r["rank_before"], r["rank_after"]) for r in without["ranks"]] == [
        ("D", 1, 1),
        ("C", 2, 3),
        ("A", 3, 2),
        ("B", 4, 4),
    ]
    assert without["excluded"] == ["t4"] and without["transitions"] == 3 and without["rank_moves"] == 2
    assert without["spearman"] == pytest.approx(1 - 6 * 2 / (4 * 15))  # d = -1, 0, 1, 0
    assert without["kendall_tau_b"] == pytest.approx((5 - 1) / 6, abs=1e-6)  # only (A, C) discordant
    assert without["max_abs_change"] == pytest.approx(1.5)  # A 6.5 -> 8
    zero = report["zero_filled"]
    # zero-filled over 4 transitions: A 6.5; B (7 + 15/4)/2 = 5.375; C 7.25; D 18/4 = 4.5 -> C A B D
    assert zero["totals"] == {"A": 6.5, "B": 5.375, "C": 7.25, "D": 4.5}
    assert {r["system"]: r["moved"] for r in zero["ranks"]} == {"D": 3, "C": -1, "A": -1, "B": -1}
    assert zero["spearman"] == pytest.approx(1 - 6 * 12 / (4 * 15))  # d = -1, -1, -1, 3
    assert zero["kendall_tau_b"] == pytest.approx(0.0, abs=1e-9)  # 3 concordant, 3 discordant pairs
    assert zero["max_abs_change"] == pytest.approx(4.5) and zero["rank_moves"] == 4


def hand_totals(given: dict, scope: set[str], zero_filled: bool) -> dict[str, float]:
    """App. F.4 by hand over one track: each judge's mean (valid-only) or sum over the scope (zero-filled)."""
    totals = {}
    for system, per_judge in given.items():
        means = []
        for scores in per_judge.values():
            valid = [v for t, v in scores.items() if t in scope and v is not None]
            if valid:
                means.append(sum(valid) / (len(scope) if zero_filled else len(valid)))
        if means:
            totals[system] = sum(means) / len(means)
    return totals


def test_every_figure_at_full_precision_equals_scipys() -> None:
    """Totals that are no round decimals (thirds, sevenths): the report gives them, their changes and both
    correlations to 1e-12 of a direct computation (a figure rounded to 6 decimals would miss by up to 5e-7)."""
    rng = random.Random(7)
    transitions = [f"t{i}" for i in range(7)]
    given = {
        f"S{n}": {
            j: {t: rng.choice([None, *range(1, 11)]) for t in transitions[: 3 + (n + k) % 5]}
            for k, j in enumerate(("j1", "j2", "j3"))
        }
        for n in range(9)
    }
    scores = [
        JudgeScore(j, t, system, "text", None if v is None else dict.fromkeys(CRITERIA, v))
        for system, per_judge in given.items()
        for j, values in per_judge.items()
        for t, v in values.items()
    ]
    report = sensitivity(scores, ["text"], transitions, sorted(given), excluded=["t1", "t5"])
    base = hand_totals(given, set(transitions), zero_filled=False)
    assert any(abs(v * 1e6 - round(v * 1e6)) > 1e-3 for v in base.values()), "the case needs non-round totals"
    for name, after in (
        ("without", hand_totals(given, set(transitions) - {"t1", "t5"}, zero_filled=False)),
        ("zero_filled", hand_totals(given, set(transitions), zero_filled=True)),
    ):
        found = report[name]
        systems = sorted(set(base) & set(after))
        x, y = [base[s] for s in systems], [after[s] for s in systems]
        assert found["spearman"] == pytest.approx(float(stats.spearmanr(x, y).statistic), abs=1e-12, rel=0)
        assert found["kendall_tau_b"] == pytest.approx(
            float(stats.kendalltau(x, y, variant="b").statistic), abs=1e-12, rel=0
        )
        for row in found["ranks"]:
            assert row["total_before"] == pytest.approx(base[row["system"]], abs=1e-12, rel=0)
            assert row["total_after"] == pytest.approx(after[row["system"]], abs=1e-12, rel=0)
            assert row["change"] == pytest.approx(after[row["system"]] - base[row["system"]], abs=1e-12, rel=0)
    assert report["valid_only"] == pytest.approx(base, abs=1e-12, rel=0)
    assert report["zero_filled"]["totals"] == pytest.approx(
        hand_totals(given, set(transitions), zero_filled=True), abs=1e-12, rel=0
    )


def test_an_unchanged_ranking_and_ties() -> None:
    report = sensitivity(judge_scores(), ["text"], T, ["A", "B", "C", "D"], excluded=[])
    assert report["without"]["spearman"] == report["without"]["kendall_tau_b"] == 1.0
    assert report["without"]["rank_moves"] == 0 and report["without"]["max_abs_change"] == 0.0
    assert ranking({"x": 2.0, "y": 3.0, "z": 2.0}) == {"y": 1, "x": 2, "z": 2}
    one = sensitivity(judge_scores(), ["text"], T, ["A"], excluded=["t4"])
    assert one["without"]["undefined"].startswith("1 system(s)")


def store_study(workspace) -> None:  # type: ignore[no-untyped-def]
    """Study s1 over T (window: t1) with the judge scores of GIVEN."""
    with workspace.writing() as s:
        s.add(
            StoryStudy(
                name="s1",
                release_name="bench",
                release_version="1.0.0",
                manifest_sha256="0" * 64,
                window=["t1"],
                transitions=T,
                tracks=["text"],
                systems=["A", "B", "C", "D"],
                pages={},
                created_by="cli",
            )
        )
        for j in judge_scores():
            s.add(
                StudyJudgeScore(
                    study="s1", judge=j.judge, system=j.system, transition=j.transition, track=j.track, scores=j.scores
                )
            )


def test_the_command_on_a_stored_study(workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store_study(workspace)
    subset = tmp_path / "flagged.txt"
    subset.write_text("# the duplicate cluster\nt4\n", encoding="utf-8")
    runner = CliRunner()
    w = ["-w", str(workspace.root), "story", "study", "sensitivity", "s1"]
    result = runner.invoke(app, [*w, "--exclude", str(subset), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["without"]["kendall_tau_b"] == pytest.approx(2 / 3, abs=1e-12, rel=0)
    without = {"A": 8.0, "B": 6.0, "C": 19 / 3, "D": 9.0}  # --json keeps C's 6.333… whole
    assert {r["system"]: r["total_after"] for r in report["without"]["ranks"]} == pytest.approx(without, abs=1e-12)
    assert report["without"]["excluded_from"] == str(subset)
    text = runner.invoke(app, [*w, "--exclude", str(subset)])
    assert "Spearman rho 0.800, Kendall tau-b 0.667, 2 rank move(s)" in text.output
    assert "  D: rank 1 -> 4 (9.000 -> 4.500)" in text.output
    # no story audit in this workspace: nothing is flagged, nothing moves
    flagged = json.loads(runner.invoke(app, [*w, "--json"]).stdout)
    assert flagged["without"]["excluded"] == [] and flagged["without"]["rank_moves"] == 0
    subset.write_text("t9\n", encoding="utf-8")
    bad = runner.invoke(app, [*w, "--exclude", str(subset)])
    assert bad.exit_code == 2 and f"{subset}:1: t9 is not a transition of study 's1'" in bad.output


def test_the_report_gives_the_judges_window_against_full_ranking(workspace) -> None:  # type: ignore[no-untyped-def]
    """The study report (App. F.5 window sensitivity): the judges' ranking on the window (t1) against every
    transition they scored, to scipy's figures at full precision; the line for people rounds."""
    from curation.study.study import headline, judge_scores, load_study, study_report

    store_study(workspace)
    report = study_report(load_study(workspace, "s1"), [], [], 0, judge_scores(workspace, "s1"))
    found = json.loads(json.dumps(report))["window_vs_full"]["text"]  # what --json prints
    window = {"A": 8.0, "B": 6.0, "C": 6.0, "D": 9.0}  # t1: A 8/8, B 7 and 5, C 6/6, D 9/9
    full = hand_totals(GIVEN, set(T), zero_filled=False)  # A 6.5, B 6, C 7.25, D 9
    x, y = [window[s] for s in sorted(window)], [full[s] for s in sorted(window)]
    rho = float(stats.spearmanr(x, y).statistic)
    assert found["spearman"] == pytest.approx(rho, abs=1e-12, rel=0) and found["systems"] == 4
    assert found["kendall_tau_b"] == pytest.approx(float(stats.kendalltau(x, y, variant="b").statistic), abs=1e-12)
    assert found["mean_window"] == pytest.approx(sum(x) / 4, abs=1e-12)
    assert found["means"]["C"] == {"window": 6.0, "full": 7.25}
    assert f"judges, window vs full, text (4 systems): Spearman rho {rho:.3f}" in "\n".join(headline(report))
