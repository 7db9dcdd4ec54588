"""System-level agreement between human and judge means (Omni-StoryBench App. F.5, Table 19).

Human means weight each completed evaluation equally after averaging its four rubric scores (or take one
criterion's scores). Judge means follow App. E.5: each judge's mean over its valid examples first, then the
judges averaged with equal weight. The unit of correlation is a system. The composite averages a system's
track means equally and needs every track. Leave-one-transition-out (LOTO) drops each window transition's
human evaluations in turn, holding the judge means fixed; a system left without human ratings is omitted in
that repetition. LOTO ranges are sensitivity ranges, not confidence intervals.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .rubric import CRITERIA

STATISTICS = ("spearman", "kendall_tau_b", "pearson")
OVERALL = "overall"
COMPOSITE = "composite"


@dataclass(frozen=True)
class Evaluation:
    """One rater's four scores for one system's output in one track (skips are not evaluations)."""

    transition: str
    system: str
    track: str
    rater: str
    scores: dict[str, int]


@dataclass(frozen=True)
class JudgeScore:
    judge: str
    transition: str
    system: str
    track: str
    scores: dict[str, int] | None


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _measure(scores: dict[str, int], measure: str) -> float:
    return _mean([float(scores[c]) for c in CRITERIA]) if measure == OVERALL else float(scores[measure])


def human_means(evaluations: Iterable[Evaluation], track: str, measure: str) -> dict[str, float]:
    """System -> mean over its evaluations in the track (each evaluation weighs the same)."""
    values: dict[str, list[float]] = defaultdict(list)
    for e in evaluations:
        if e.track == track:
            values[e.system].append(_measure(e.scores, measure))
    return {s: _mean(v) for s, v in values.items()}


def judge_means(scores: Iterable[JudgeScore], track: str, measure: str, scope: set[str] | None) -> dict[str, float]:
    """System -> the judges' equal-weight average of each judge's mean over its valid examples in ``scope``."""
    per_judge: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for j in scores:
        if j.track == track and j.scores is not None and (scope is None or j.transition in scope):
            per_judge[j.system][j.judge].append(_measure(j.scores, measure))
    return {s: _mean([_mean(v) for v in judges.values()]) for s, judges in per_judge.items()}


def composite(track_means: dict[str, dict[str, float]], tracks: Sequence[str]) -> dict[str, float]:
    """System -> the equal average of its track means, for systems with a mean in every track."""
    systems = set.intersection(*(set(track_means[t]) for t in tracks)) if tracks else set()
    return {s: _mean([track_means[t][s] for t in tracks]) for s in systems}


def correlate(human: dict[str, float], judge: dict[str, float]) -> dict[str, Any]:
    """Spearman's rho, Kendall's tau-b and Pearson's r across the systems both sides have, with p-values."""
    from scipy import stats

    systems = sorted(set(human) & set(judge))
    result: dict[str, Any] = {"systems": len(systems)}
    if len(systems) < 3:
        result["undefined"] = f"{len(systems)} system(s) with both human and judge means: a correlation needs 3"
        return result
    x, y = [human[s] for s in systems], [judge[s] for s in systems]
    for who, values in (("human", x), ("judge", y)):
        if max(values) == min(values):
            result["undefined"] = f"every system has the same {who} mean ({values[0]:.3f})"
            return result
    for name, test in (
        ("spearman", stats.spearmanr(x, y)),
        ("kendall_tau_b", stats.kendalltau(x, y, variant="b")),
        ("pearson", stats.pearsonr(x, y)),
    ):
        result[name] = {"value": float(test.statistic), "p_value": float(test.pvalue)}
    return result


def _loto(
    evaluations: Sequence[Evaluation],
    window: Sequence[str],
    judge: dict[str, float],
    human_of: Any,
) -> dict[str, Any]:
    """Min–max of each statistic (and of the systems kept) over the repetitions that leave one transition out."""
    values: dict[str, list[float]] = defaultdict(list)
    systems: list[int] = []
    undefined = 0
    for left_out in window:
        kept = [e for e in evaluations if e.transition != left_out]
        result = correlate(human_of(kept), judge)
        if "undefined" in result:
            undefined += 1
            continue
        systems.append(result["systems"])
        for name in STATISTICS:
            values[name].append(result[name]["value"])
    loto: dict[str, Any] = {"repetitions": len(window), "undefined": undefined}
    if systems:
        loto["systems"] = [min(systems), max(systems)]
        for name in STATISTICS:
            loto[name] = [min(values[name]), max(values[name])]
    return loto


def agreement(
    evaluations: Sequence[Evaluation],
    judges: Sequence[JudgeScore],
    tracks: Sequence[str],
    window: Sequence[str],
    scope: set[str] | None = None,
) -> dict[str, Any]:
    """Per track, per measure (overall and each criterion), and for the composite: the three correlations
    between human and judge system means, each with its LOTO ranges. ``scope``: the transitions whose judge
    scores count (None: every judged transition — App. F.5 compares with full-benchmark judge means)."""
    measures = (OVERALL, *CRITERIA)
    report: dict[str, Any] = {}
    judge_overall: dict[str, dict[str, float]] = {}
    for track in tracks:
        report[track] = {}
        for measure in measures:
            judge = judge_means(judges, track, measure, scope)
            if measure == OVERALL:
                judge_overall[track] = judge

            def human_of(evals: Sequence[Evaluation], track: str = track, measure: str = measure) -> dict[str, float]:
                return human_means(evals, track, measure)

            result = correlate(human_of(evaluations), judge)
            if "undefined" not in result:
                result["loto"] = _loto(evaluations, window, judge, human_of)
            report[track][measure] = result
    if len(tracks) > 1:
        judge = composite(judge_overall, tracks)

        def human_composite(evals: Sequence[Evaluation]) -> dict[str, float]:
            return composite({t: human_means(evals, t, OVERALL) for t in tracks}, tracks)

        result = correlate(human_composite(evaluations), judge)
        if "undefined" not in result:
            result["loto"] = _loto(evaluations, window, judge, human_composite)
        report[COMPOSITE] = {OVERALL: result}
    return report


def rank_agreement(window: dict[str, float], full: dict[str, float]) -> dict[str, Any]:
    """Spearman's rho and Kendall's tau-b between the systems' judge means on the window and on every judged
    transition, with each system's two means and their average over the systems both sides have."""

    systems = sorted(set(window) & set(full))
    result: dict[str, Any] = {
        "systems": len(systems),
        "means": {s: {"window": window[s], "full": full[s]} for s in systems},
    }
    if systems:
        result["mean_window"] = _mean([window[s] for s in systems])
        result["mean_full"] = _mean([full[s] for s in systems])
    if len(systems) < 2:
        result["undefined"] = f"{len(systems)} system(s) with judge means on the window and in full: a rank needs 2"
        return result
    x, y = [window[s] for s in systems], [full[s] for s in systems]
    return rank_correlation(result, x, y, ("on the window", "in full"), "judge mean")


def rank_correlation(
    result: dict[str, Any], x: Sequence[float], y: Sequence[float], sides: tuple[str, str], what: str
) -> dict[str, Any]:
    """RESULT with Spearman's rho and Kendall's tau-b of two scorings of the same systems, or, when one side gives
    every system the same WHAT, why they are undefined (SIDES name the two scorings in that message)."""
    from scipy import stats

    for who, values in zip(sides, (x, y), strict=True):
        if max(values) == min(values):
            result["undefined"] = f"every system has the same {what} {who} ({values[0]:.3f})"
            return result
    result["spearman"] = float(stats.spearmanr(x, y).statistic)
    result["kendall_tau_b"] = float(stats.kendalltau(x, y, variant="b").statistic)
    return result


def window_vs_full(judges: Sequence[JudgeScore], tracks: Sequence[str], window: Sequence[str]) -> dict[str, Any]:
    """App. F.5's window sensitivity: per track (and for the composite of the tracks), the judges' system
    ranking on the study's window against their ranking on every transition they judged (the full benchmark
    when they judged it all), both aggregated alike (each judge's valid-example mean, judges averaged equally)."""
    scope = set(window)
    on_window = {t: judge_means(judges, t, OVERALL, scope) for t in tracks}
    in_full = {t: judge_means(judges, t, OVERALL, None) for t in tracks}
    report = {t: rank_agreement(on_window[t], in_full[t]) for t in tracks}
    if len(tracks) > 1:
        report[COMPOSITE] = rank_agreement(composite(on_window, tracks), composite(in_full, tracks))
    return report


def system_table(
    evaluations: Sequence[Evaluation], judges: Sequence[JudgeScore], tracks: Sequence[str], scope: set[str] | None
) -> list[dict[str, Any]]:
    """Per system and track: the human and judge means (overall and per criterion) and how many stand behind them."""
    systems = sorted({e.system for e in evaluations} | {j.system for j in judges})
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for e in evaluations:
        counts[(e.system, e.track)] += 1
    valid: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    invalid: dict[tuple[str, str], int] = defaultdict(int)
    for j in judges:
        if scope is None or j.transition in scope:
            if j.scores is None:
                invalid[(j.system, j.track)] += 1
            else:
                valid[(j.system, j.track)].add((j.judge, j.transition))
    means = {
        (side, track, measure): fn(track, measure)
        for track in tracks
        for measure in (OVERALL, *CRITERIA)
        for side, fn in (
            ("human", lambda t, m: human_means(evaluations, t, m)),
            ("judge", lambda t, m: judge_means(judges, t, m, scope)),
        )
    }
    rows = []
    for system in systems:
        row: dict[str, Any] = {"system": system, "tracks": {}}
        for track in tracks:
            cell: dict[str, Any] = {}
            for side in ("human", "judge"):
                overall = means[(side, track, OVERALL)].get(system)
                cell[side] = {
                    "mean": overall,
                    "criteria": {
                        c: means[(side, track, c)][system] for c in CRITERIA if system in means[(side, track, c)]
                    },
                }
            cell["human"]["evaluations"] = counts[(system, track)]
            cell["judge"]["valid"] = len(valid[(system, track)])
            cell["judge"]["invalid"] = invalid[(system, track)]
            cell["judge"]["judges"] = len({judge for judge, _ in valid[(system, track)]})
            row["tracks"][track] = cell
        row[COMPOSITE] = {
            side: (
                _mean([row["tracks"][t][side]["mean"] for t in tracks])
                if all(row["tracks"][t][side]["mean"] is not None for t in tracks)
                else None
            )
            for side in ("human", "judge")
        }
        rows.append(row)
    return rows


def inter_rater(evaluations: Sequence[Evaluation], tracks: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Ordinal Krippendorff alpha per track and criterion (App. F.5, Table 21); units are outputs."""
    from curation.agreement import UndefinedStatistic, krippendorff_alpha, ratings_from_rows

    result: dict[str, dict[str, Any]] = {}
    for track in tracks:
        result[track] = {}
        for c in CRITERIA:
            rows = [
                (i, {"unit": f"{e.transition}|{e.system}", "coder": e.rater, "value": e.scores[c]})
                for i, e in enumerate((e for e in evaluations if e.track == track), start=1)
            ]
            try:
                if not rows:
                    raise UndefinedStatistic("no evaluations")
                estimate = krippendorff_alpha(ratings_from_rows(rows), "ordinal")
                result[track][c] = {"value": estimate.value, "units": estimate.units}
            except UndefinedStatistic as exc:
                result[track][c] = {"value": None, "undefined": str(exc)}
    return result
