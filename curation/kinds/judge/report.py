"""Judges measured against people (Judge Anything §3.1, App. B.5).

Scores: per score sample and criterion, the human reference is the mean of the annotators' 1–5 scores
and a judge's score the mean (or median) of its samples; evaluator fusion is the mean of the judges.
Reported per judge, per criterion and per modality pair: Pearson and Spearman correlations, the mean
absolute error and the exact-match rate (both rounded half up to an integer and equal).

Pairs: per pair sample and criterion, the human reference is the annotators' majority choice (``tie``
without a strict majority) and a judge's choice the majority of its samples; fusion is the majority of the
judges. Reported: accuracy with ties and without the pairs people called a tie.

Intervals are percentile bootstraps over samples; every judge and criterion is measured on the same
resamples (a paired bootstrap), drawn in batches, so the cost is linear in the number of samples.
The arena ranks systems by Elo (K = 32, in sample order) and Bradley–Terry from the people's and from
each judge's overall choices, side by side. Choice rates and rubric-versus-overall correlation maps (Table 6,
Fig. 5) are in :mod:`.choice_maps`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

import numpy as np

from curation.agreement.alpha import krippendorff_alpha
from curation.agreement.bootstrap import resample_counts
from curation.agreement.errors import UndefinedStatistic
from curation.agreement.judge import PairRow, bradley_terry, elo_ratings
from curation.agreement.ratings import MISSING, Ratings
from curation.errors import Problem, ValidationFailed

from .choice_maps import choice_rates, choice_values, correlation_maps
from .rubrics import CHOICES, CRITERIA, OVERALL
from .schema import JudgeOutputLine, PairAnnotation, PairSample, ScoreAnnotation, ScoreSample

FUSION = "fusion"
HUMAN = "human"
SCORE_METRICS = ("pearson", "spearman", "mae", "exact_match")
PAIR_METRICS = ("accuracy_with_ties", "accuracy_without_ties")
CHOICE_INDEX = {c: i for i, c in enumerate(CHOICES)}  # first 0, second 1, tie 2
TIE = CHOICE_INDEX["tie"]
ARENA_OUTCOME = {"first": "A", "second": "B", "tie": "tie"}


@dataclass(frozen=True)
class ReportSettings:
    """How judge samples are combined and how intervals are drawn."""

    judge_scores: str = "mean"  # or "median"
    bootstrap: int = 1000
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.judge_scores not in ("mean", "median"):
            raise ValidationFailed(
                [Problem(f"unknown aggregation {self.judge_scores!r}; use mean or median", "judge_scores")]
            )
        if self.bootstrap < 0:
            raise ValidationFailed([Problem("the number of resamples cannot be negative", "bootstrap")])


# ---- weighted statistics ------------------------------------------------------------------------------
# A cell's samples are reduced once to a table of distinct (human, judge) value pairs. A row of weights
# (a resample's draw counts; a row of ones is the point estimate) becomes a row of weighted pair counts by
# one sparse product, and every figure is read off those small tables: the cost per resample is linear in
# the samples, with no per-sample work beyond the product.


@dataclass(frozen=True)
class _PairTable:
    """The distinct (human, judge) values of a cell and each sample's pair index."""

    x: np.ndarray  # human value of each distinct pair
    y: np.ndarray  # judge value of each distinct pair
    xi: np.ndarray  # index of the pair's human value among the distinct human values
    yi: np.ndarray
    nx: int
    ny: int
    onehot: Any  # samples x pairs (scipy CSR)

    @classmethod
    def of(cls, human: np.ndarray, judge: np.ndarray) -> _PairTable:
        from scipy.sparse import csr_matrix

        ux, cx = np.unique(human, return_inverse=True)
        uy, cy = np.unique(judge, return_inverse=True)
        codes, pair = np.unique(cx * uy.size + cy, return_inverse=True)
        n = human.size
        onehot = csr_matrix((np.ones(n), (np.arange(n), pair)), shape=(n, codes.size))
        xi, yi = codes // uy.size, codes % uy.size
        return cls(ux[xi], uy[yi], xi, yi, ux.size, uy.size, onehot)

    def counts(self, w: np.ndarray) -> np.ndarray:
        """Resamples x pairs: the weight of each distinct pair."""
        return np.asarray((self.onehot.T @ w.T).T)


def _pearson_from(counts: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r per row of pair counts (pairs at values x, y); NaN when a side is constant."""
    total = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mx = counts @ x / total
        my = counts @ y / total
        cov = counts @ (x * y) / total - mx * my
        vx = counts @ (x * x) / total - mx * mx
        vy = counts @ (y * y) / total - my * my
        scale = np.maximum(np.abs(mx), np.abs(my)) ** 2 + 1.0
        defined = (vx > 1e-12 * scale) & (vy > 1e-12 * scale) & (total > 0)
        return np.where(defined, cov / np.sqrt(np.abs(vx * vy)), np.nan)


def _midranks(counts: np.ndarray, index: np.ndarray, n_values: int) -> np.ndarray:
    """Per row, each distinct pair's mid-rank on one side, every sample counted as often as drawn."""
    per_value = counts @ (index[:, None] == np.arange(n_values)[None, :])  # pairs -> values, a small product
    midrank = np.cumsum(per_value, axis=1) - per_value + (per_value + 1.0) / 2.0
    return midrank[:, index]


def _round_half_up(x: np.ndarray) -> np.ndarray:
    return np.floor(x + 0.5)


def _score_metrics(table: _PairTable, counts: np.ndarray) -> dict[str, np.ndarray]:
    total = counts.sum(axis=1)
    rx = _midranks(counts, table.xi, table.nx)
    ry = _midranks(counts, table.yi, table.ny)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = (counts * rx * ry).sum(axis=1) / total
        mx, my = (counts * rx).sum(axis=1) / total, (counts * ry).sum(axis=1) / total
        vx = (counts * rx * rx).sum(axis=1) / total - mx * mx
        vy = (counts * ry * ry).sum(axis=1) / total - my * my
        spearman = np.where((vx > 1e-9) & (vy > 1e-9), (cov - mx * my) / np.sqrt(np.abs(vx * vy)), np.nan)
        return {
            "pearson": _pearson_from(counts, table.x, table.y),
            "spearman": spearman,
            "mae": counts @ np.abs(table.x - table.y) / total,
            "exact_match": counts @ (_round_half_up(table.x) == _round_half_up(table.y)).astype(float) / total,
        }


def _pair_metrics(table: _PairTable, counts: np.ndarray) -> dict[str, np.ndarray]:
    match = (table.x == table.y).astype(float)
    decided = (table.x != TIE).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "accuracy_with_ties": counts @ match / counts.sum(axis=1),
            "accuracy_without_ties": counts @ (match * decided) / (counts @ decided),
        }


# ---- one measured cell: a judge × criterion × modality pair, with its bootstrap values -----------------


@dataclass
class _Cell:
    judge: str
    criterion: str
    group: str  # "all" or a modality pair
    units: np.ndarray  # indices of the samples that enter (both sides defined)
    table: _PairTable
    metrics: Callable[[_PairTable, np.ndarray], dict[str, np.ndarray]]
    point: dict[str, float]
    draws: dict[str, list[np.ndarray]]


def _cells(
    judges: dict[str, np.ndarray],
    human: np.ndarray,
    groups: np.ndarray,
    group_names: Sequence[str],
    metrics: Callable[[_PairTable, np.ndarray], dict[str, np.ndarray]],
    defined: Callable[[np.ndarray], np.ndarray],
) -> list[_Cell]:
    """Every (judge, criterion, all | modality pair) with at least one sample judged by both sides."""
    cells = []
    for judge, values in judges.items():
        for c, criterion in enumerate(CRITERIA):
            both = defined(human[:, c]) & defined(values[:, c])
            for g, group in enumerate(["all", *group_names]):
                units = np.flatnonzero(both if g == 0 else both & (groups == g - 1))
                if units.size == 0:
                    continue
                table = _PairTable.of(human[units, c], values[units, c])
                point = {k: float(v[0]) for k, v in metrics(table, table.counts(np.ones((1, units.size)))).items()}
                cells.append(_Cell(judge, criterion, group, units, table, metrics, point, {}))
    return cells


def _bootstrap(cells: list[_Cell], n_units: int, settings: ReportSettings) -> None:
    """Draw resamples of all samples once and measure every cell on each (a paired bootstrap)."""
    if settings.bootstrap == 0 or not cells:
        return
    rng = np.random.default_rng(settings.seed)
    for counts in resample_counts(n_units, settings.bootstrap, rng):
        for cell in cells:
            for name, values in cell.metrics(cell.table, cell.table.counts(counts[:, cell.units])).items():
                cell.draws.setdefault(name, []).append(values)


def _figure(cell: _Cell, name: str, settings: ReportSettings) -> dict[str, Any]:
    value = cell.point[name]
    out: dict[str, Any] = {"value": value if np.isfinite(value) else None}
    if not np.isfinite(value):
        out["undefined"] = (
            "a side gives every sample the same value, so the correlation is undefined"
            if name in ("pearson", "spearman")
            else "no sample where people chose a side"
        )
    if cell.draws:
        values = np.concatenate(cell.draws[name])
        finite = values[np.isfinite(values)]
        tail = (1 - settings.confidence) / 2
        out["ci"] = (
            [float(q) for q in np.quantile(finite, [tail, 1 - tail])] if finite.size and np.isfinite(value) else None
        )
    return out


def _table(cells: list[_Cell], names: Sequence[str], settings: ReportSettings) -> dict[str, Any]:
    """judge → {"all": {criterion: figures}, "by_modality_pair": {pair: {criterion: figures}}}."""
    table: dict[str, Any] = {}
    for cell in cells:
        figures = {"n": int(cell.units.size), **{n: _figure(cell, n, settings) for n in names}}
        entry = table.setdefault(cell.judge, {"all": {}, "by_modality_pair": {}})
        if cell.group == "all":
            entry["all"][cell.criterion] = figures
        else:
            entry["by_modality_pair"].setdefault(cell.group, {})[cell.criterion] = figures
    return table


# ---- gathering ----------------------------------------------------------------------------------------


def _index(samples: Sequence[ScoreSample] | Sequence[PairSample], what: str) -> dict[str, int]:
    index: dict[str, int] = {}
    for s in samples:
        if s.id in index:
            raise ValidationFailed([Problem(f"{what} sample {s.id!r} is given twice", "id")])
        index[s.id] = len(index)
    return index


def _unknown(kind: str, sample: str) -> Problem:
    return Problem(f"unknown {kind} sample {sample!r}", "sample")


def _score_matrix(
    index: dict[str, int], rows: Iterable[tuple[str, dict[str, list[int]]]], how: str, kind: str
) -> np.ndarray:
    """samples × criteria means (or medians) of the given values; NaN where nothing was given."""
    values = np.full((len(index), len(CRITERIA)), np.nan)
    problems = []
    for sample, scores in rows:
        i = index.get(sample)
        if i is None:
            problems.append(_unknown(kind, sample))
            continue
        for criterion, given in scores.items():
            values[i, CRITERIA.index(criterion)] = sum(given) / len(given) if how == "mean" else median(given)
    if problems:
        raise ValidationFailed(problems, "the report was not made")
    return values


def _human_scores(index: dict[str, int], annotations: Sequence[ScoreAnnotation]) -> tuple[np.ndarray, np.ndarray]:
    """The mean human score per sample × criterion, and the annotator-level cube for agreement."""
    annotators = sorted({a.annotator for a in annotations})
    who = {a: i for i, a in enumerate(annotators)}
    cube = np.full((len(index), len(annotators), len(CRITERIA)), np.nan)
    problems = []
    for a in annotations:
        i = index.get(a.sample)
        if i is None:
            problems.append(_unknown("score", a.sample))
            continue
        for criterion, score in a.scores.items():
            cube[i, who[a.annotator], CRITERIA.index(criterion)] = score
    if problems:
        raise ValidationFailed(problems, "the report was not made")
    with np.errstate(invalid="ignore"):
        counts = np.sum(np.isfinite(cube), axis=1)
        means = np.where(counts > 0, np.nansum(cube, axis=1) / np.maximum(counts, 1), np.nan)
    return means, cube


def _majority(choice_counts: np.ndarray) -> np.ndarray:
    """samples × criteria × 3 counts → the choice with a strict majority over the others, ``tie`` otherwise;
    -1 where nothing was given."""
    best = choice_counts.argmax(axis=-1)
    top = choice_counts.max(axis=-1)
    second = np.sort(choice_counts, axis=-1)[..., -2]
    result = np.where(top > second, best, TIE)
    return np.where(choice_counts.sum(axis=-1) > 0, result, -1)


def _choice_counts(
    index: dict[str, int], rows: Iterable[tuple[str, Mapping[str, Sequence[str]]]], kind: str
) -> np.ndarray:
    counts = np.zeros((len(index), len(CRITERIA), len(CHOICES)))
    problems = []
    for sample, choices in rows:
        i = index.get(sample)
        if i is None:
            problems.append(_unknown(kind, sample))
            continue
        for criterion, given in choices.items():
            for choice in given:
                counts[i, CRITERIA.index(criterion), CHOICE_INDEX[choice]] += 1
    if problems:
        raise ValidationFailed(problems, "the report was not made")
    return counts


def _ratings(matrix: np.ndarray) -> Ratings:
    """Samples x annotators (NaN where absent) as Ratings, without going through rows of text."""
    rated = np.isfinite(matrix)
    keep = rated.any(axis=1)
    matrix, rated = matrix[keep], rated[keep]
    values = np.unique(matrix[rated])
    index = np.full(matrix.shape, MISSING, dtype=np.int64)
    index[rated] = np.searchsorted(values, matrix[rated])
    return Ratings(
        units=tuple(str(i) for i in np.flatnonzero(keep)),
        coders=tuple(f"a{k}" for k in range(matrix.shape[1])),
        values=tuple(float(v) for v in values),
        matrix=index,
    )


def _alpha(cube: np.ndarray, level: str) -> dict[str, Any]:
    """α per criterion over samples × annotators (cross-validation of the people)."""
    out: dict[str, dict[str, Any]] = {}
    for c, criterion in enumerate(CRITERIA):
        matrix = cube[:, :, c]
        if cube.shape[1] < 2 or np.sum(np.sum(np.isfinite(matrix), axis=1) >= 2) == 0:
            out[criterion] = {"value": None, "undefined": "no sample was annotated by two people"}
            continue
        try:
            estimate = krippendorff_alpha(_ratings(matrix), level)
            out[criterion] = {"value": estimate.value, "units": estimate.units}
        except UndefinedStatistic as exc:
            out[criterion] = {"value": None, "undefined": str(exc)}
    return out


def _arena(samples: Sequence[PairSample], sources: dict[str, np.ndarray]) -> dict[str, Any]:
    """Elo and Bradley–Terry of systems from each source's overall choices, in sample-id order."""
    order = sorted(range(len(samples)), key=lambda i: samples[i].id)
    c = CRITERIA.index(OVERALL)
    elo: dict[str, Any] = {}
    bt: dict[str, Any] = {}
    for source, choices in sources.items():
        rows = [
            PairRow(
                samples[i].id, samples[i].first_system, samples[i].second_system, ARENA_OUTCOME[CHOICES[choices[i, c]]]
            )
            for i in order
            if choices[i, c] >= 0
        ]
        if not rows:
            elo[source] = bt[source] = {"undefined": "no overall choices"}
            continue
        elo[source] = elo_ratings(rows)
        try:
            bt[source] = bradley_terry(rows)
        except UndefinedStatistic as exc:
            bt[source] = {"undefined": str(exc)}
    return {"elo": elo, "bradley_terry": bt}


# ---- the report ---------------------------------------------------------------------------------------


def score_report(
    samples: Sequence[ScoreSample],
    annotations: Sequence[ScoreAnnotation],
    outputs: Sequence[JudgeOutputLine],
    settings: ReportSettings = ReportSettings(),
) -> dict[str, Any]:
    index = _index(samples, "score")
    human, cube = _human_scores(index, annotations)
    by_judge: dict[str, list[tuple[str, dict[str, list[int]]]]] = {}
    for out in outputs:
        if out.scores is None:
            raise ValidationFailed(
                [Problem(f"judge {out.judge} gives choices for score sample {out.sample}", "choices")]
            )
        by_judge.setdefault(out.judge, []).append((out.sample, out.scores))
    judges = {j: _score_matrix(index, rows, settings.judge_scores, "score") for j, rows in sorted(by_judge.items())}
    if len(judges) > 1:
        stacked = np.stack(list(judges.values()))
        with np.errstate(invalid="ignore"):
            counts = np.sum(np.isfinite(stacked), axis=0)
            judges[FUSION] = np.where(counts > 0, np.nansum(stacked, axis=0) / np.maximum(counts, 1), np.nan)
    pair_names = sorted({s.modality_pair for s in samples})
    groups = np.asarray([pair_names.index(s.modality_pair) for s in samples], dtype=np.int64)
    cells = _cells(judges, human, groups, pair_names, _score_metrics, np.isfinite)
    _bootstrap(cells, len(samples), settings)
    return {
        "samples": len(samples),
        "annotations": len(annotations),
        "annotators": cube.shape[1],
        "judges": [j for j in judges if j != FUSION],
        "human_agreement": _alpha(cube, "ordinal"),
        "metrics": _table(cells, SCORE_METRICS, settings),
        "correlation_maps": correlation_maps({HUMAN: human, **{j: v for j, v in judges.items() if j != FUSION}}),
    }


def pair_report(
    samples: Sequence[PairSample],
    annotations: Sequence[PairAnnotation],
    outputs: Sequence[JudgeOutputLine],
    settings: ReportSettings = ReportSettings(),
) -> dict[str, Any]:
    index = _index(samples, "pair")
    annotators = sorted({a.annotator for a in annotations})
    who = {a: i for i, a in enumerate(annotators)}
    cube = np.full((len(samples), len(annotators), len(CRITERIA)), np.nan)
    for a in annotations:
        if a.sample not in index:
            raise ValidationFailed([_unknown("pair", a.sample)], "the report was not made")
        for criterion, choice in a.choices.items():
            cube[index[a.sample], who[a.annotator], CRITERIA.index(criterion)] = CHOICE_INDEX[choice]
    human = _majority(
        _choice_counts(index, ((a.sample, {k: [v] for k, v in a.choices.items()}) for a in annotations), "pair")
    )
    by_judge: dict[str, list[tuple[str, Mapping[str, Sequence[str]]]]] = {}
    for out in outputs:
        if out.choices is None:
            raise ValidationFailed([Problem(f"judge {out.judge} gives scores for pair sample {out.sample}", "scores")])
        by_judge.setdefault(out.judge, []).append((out.sample, out.choices))
    judges = {j: _majority(_choice_counts(index, rows, "pair")) for j, rows in sorted(by_judge.items())}
    if len(judges) > 1:
        votes = np.zeros((len(samples), len(CRITERIA), len(CHOICES)))
        for choices in judges.values():
            for k in range(len(CHOICES)):
                votes[..., k] += choices == k
        judges[FUSION] = _majority(votes)
    pair_names = sorted({s.modality_pair for s in samples})
    groups = np.asarray([pair_names.index(s.modality_pair) for s in samples], dtype=np.int64)
    cells = _cells(judges, human, groups, pair_names, _pair_metrics, lambda v: v >= 0)
    _bootstrap(cells, len(samples), settings)
    return {
        "samples": len(samples),
        "annotations": len(annotations),
        "annotators": len(annotators),
        "judges": [j for j in judges if j != FUSION],
        "human_agreement": _alpha(cube, "nominal"),
        "human_choices": {
            c: {CHOICES[k]: int(np.sum(human[:, i] == k)) for k in range(len(CHOICES))} for i, c in enumerate(CRITERIA)
        },
        "metrics": _table(cells, PAIR_METRICS, settings),
        "choice_rates": choice_rates({HUMAN: human, **judges}, groups, pair_names),
        "correlation_maps": correlation_maps(
            {HUMAN: choice_values(human), **{j: choice_values(v) for j, v in judges.items() if j != FUSION}}
        ),
        "arena": _arena(samples, {HUMAN: human, **judges}),
    }


def judge_report(
    score_samples: Sequence[ScoreSample],
    score_annotations: Sequence[ScoreAnnotation],
    pair_samples: Sequence[PairSample],
    pair_annotations: Sequence[PairAnnotation],
    outputs: Sequence[JudgeOutputLine],
    settings: ReportSettings = ReportSettings(),
) -> dict[str, Any]:
    """The whole report: scores, pairs and the arena (each part present when it has samples)."""
    report: dict[str, Any] = {
        "settings": {
            "judge_scores": settings.judge_scores,
            "judge_choices": "majority",
            "fusion": "mean of judges (scores), majority of judges (choices)",
            "bootstrap": settings.bootstrap,
            "seed": settings.seed,
            "confidence": settings.confidence,
        }
    }
    score_ids = {s.id for s in score_samples}
    if score_samples:
        report["scores"] = score_report(
            score_samples, score_annotations, [o for o in outputs if o.sample in score_ids], settings
        )
    pair_ids = {s.id for s in pair_samples}
    if pair_samples:
        report["pairs"] = pair_report(
            pair_samples, pair_annotations, [o for o in outputs if o.sample in pair_ids], settings
        )
    stray = sorted({o.sample for o in outputs} - score_ids - pair_ids)
    if stray:
        raise ValidationFailed(
            [_unknown("judged", s) for s in stray[:20]], f"{len(stray)} judged sample(s) are unknown"
        )
    return report
