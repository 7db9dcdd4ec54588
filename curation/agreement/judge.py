"""Judge–human agreement for rating campaigns (Judge Anything §3.1, App. B.5; Omni-StoryBench App. F.6).

Scores: per (system, item, criterion) a human score and a judge score. System-level agreement averages
each system's scores and correlates the two rankings across systems; item-level agreement is the mean
absolute difference. Pairs: per comparison of systems A and B, the human's and the judge's outcome
(``A``, ``B`` or ``tie``), giving accuracy with and without human ties, Elo ratings and Bradley–Terry
strengths.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from curation.errors import Problem, ValidationFailed

from .errors import UndefinedStatistic

OUTCOMES = ("A", "B", "tie")
ELO_K = 32.0
ELO_START = 1000.0
ELO_SCALE = 400.0


@dataclass(frozen=True)
class ScoreRow:
    system: str
    item: str
    criterion: str
    human: float
    judge: float


@dataclass(frozen=True)
class PairRow:
    """One comparison of system ``a`` with system ``b`` on an item; outcomes are ``A``, ``B`` or ``tie``."""

    item: str
    a: str
    b: str
    human: str
    judge: str | None = None


@dataclass(frozen=True)
class Correlation:
    value: float
    p_value: float

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "p_value": self.p_value}


@dataclass(frozen=True)
class ScoreAgreement:
    """System-level correlations and the item-level mean absolute difference, for one criterion or all."""

    criterion: str
    systems: int
    rows: int
    spearman: Correlation
    kendall: Correlation
    pearson: Correlation
    mean_absolute_difference: float

    def as_dict(self) -> dict[str, object]:
        return {
            "criterion": self.criterion,
            "systems": self.systems,
            "rows": self.rows,
            "spearman": self.spearman.as_dict(),
            "kendall_tau_b": self.kendall.as_dict(),
            "pearson": self.pearson.as_dict(),
            "mean_absolute_difference": self.mean_absolute_difference,
        }


def _system_means(rows: Sequence[ScoreRow]) -> tuple[list[str], np.ndarray, np.ndarray]:
    systems, index = np.unique(np.asarray([r.system for r in rows], dtype=object), return_inverse=True)
    human = np.asarray([r.human for r in rows], dtype=np.float64)
    judge = np.asarray([r.judge for r in rows], dtype=np.float64)
    per_system = np.bincount(index, minlength=systems.size)
    return (
        list(systems),
        np.bincount(index, weights=human, minlength=systems.size) / per_system,
        np.bincount(index, weights=judge, minlength=systems.size) / per_system,
    )


def score_agreement(rows: Iterable[ScoreRow], criterion: str = "all") -> ScoreAgreement:
    """Agreement of judge with human scores; raises :class:`UndefinedStatistic` when it has no value."""
    from scipy import stats

    rows = list(rows)
    if not rows:
        raise UndefinedStatistic(f"judge–human agreement ({criterion}): there are no scored rows")
    bad = [i for i, r in enumerate(rows, start=1) if not (np.isfinite(r.human) and np.isfinite(r.judge))]
    if bad:
        raise ValidationFailed([Problem("score is not a finite number", field="score", line=i) for i in bad])
    systems, human, judge = _system_means(rows)
    if len(systems) < 3:
        raise UndefinedStatistic(
            f"judge–human correlation ({criterion}) needs at least three systems; there are {len(systems)}"
        )
    for who, means in (("human", human), ("judge", judge)):
        if np.ptp(means) == 0:
            raise UndefinedStatistic(
                f"judge–human correlation ({criterion}) is undefined: every system has the same mean {who} "
                f"score ({means[0]:.3f})"
            )
    spearman = stats.spearmanr(human, judge)
    kendall = stats.kendalltau(human, judge, variant="b")
    pearson = stats.pearsonr(human, judge)
    differences = np.abs(np.asarray([r.human - r.judge for r in rows]))
    return ScoreAgreement(
        criterion=criterion,
        systems=len(systems),
        rows=len(rows),
        spearman=Correlation(float(spearman.statistic), float(spearman.pvalue)),
        kendall=Correlation(float(kendall.statistic), float(kendall.pvalue)),
        pearson=Correlation(float(pearson.statistic), float(pearson.pvalue)),
        mean_absolute_difference=float(differences.mean()),
    )


def rows_by_criterion(rows: Iterable[ScoreRow]) -> dict[str, list[ScoreRow]]:
    """Rows per criterion, plus all of them together under ``all`` when there is more than one."""
    rows = list(rows)
    criteria = sorted({r.criterion for r in rows})
    groups = {c: [r for r in rows if r.criterion == c] for c in criteria}
    if len(criteria) > 1:
        groups["all"] = rows
    return groups


def score_agreement_by_criterion(rows: Iterable[ScoreRow]) -> dict[str, ScoreAgreement]:
    """:func:`score_agreement` for each criterion and for all of them together (key ``all``)."""
    return {c: score_agreement(subset, c) for c, subset in rows_by_criterion(rows).items()}


def _check_outcomes(rows: Sequence[PairRow], need_judge: bool) -> None:
    problems = []
    for line, row in enumerate(rows, start=1):
        if row.human not in OUTCOMES:
            problems.append(Problem(f"{row.human!r} is not one of A, B, tie", field="human", line=line))
        if need_judge and row.judge not in OUTCOMES:
            problems.append(Problem(f"{row.judge!r} is not one of A, B, tie", field="judge", line=line))
        if row.a == row.b:
            problems.append(Problem(f"system {row.a!r} is compared with itself", field="b", line=line))
    if problems:
        raise ValidationFailed(problems)


@dataclass(frozen=True)
class PairAccuracy:
    with_ties: float
    without_ties: float | None
    pairs: int
    human_ties: int

    def as_dict(self) -> dict[str, object]:
        return {
            "with_ties": self.with_ties,
            "without_ties": self.without_ties,
            "pairs": self.pairs,
            "human_ties": self.human_ties,
        }


def pair_accuracy(rows: Iterable[PairRow]) -> PairAccuracy:
    """Share of pairs where the judge picks the human's outcome; ``without_ties`` skips the human's ties."""
    rows = list(rows)
    if not rows:
        raise UndefinedStatistic("pair accuracy: there are no judged pairs")
    _check_outcomes(rows, need_judge=True)
    human = np.asarray([r.human for r in rows])
    judge = np.asarray([r.judge for r in rows])
    match = human == judge
    decided = human != "tie"
    return PairAccuracy(
        with_ties=float(match.mean()),
        without_ties=float(match[decided].mean()) if decided.any() else None,
        pairs=len(rows),
        human_ties=int((~decided).sum()),
    )


def _scores(rows: Sequence[PairRow], use_judge: bool) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """System names, the a/b indices of each comparison and A's score in it (1 win, 0.5 tie, 0 loss)."""
    _check_outcomes(rows, need_judge=use_judge)
    names = sorted({r.a for r in rows} | {r.b for r in rows})
    pos = {n: i for i, n in enumerate(names)}
    a = np.asarray([pos[r.a] for r in rows], dtype=np.int64)
    b = np.asarray([pos[r.b] for r in rows], dtype=np.int64)
    outcome = [r.judge if use_judge else r.human for r in rows]
    score_a = np.asarray([{"A": 1.0, "tie": 0.5, "B": 0.0}[o] for o in outcome])  # type: ignore[index]
    return names, a, b, score_a


def elo_ratings(
    rows: Iterable[PairRow], use_judge: bool = False, k: float = ELO_K, start: float = ELO_START
) -> dict[str, float]:
    """Elo ratings after each comparison in order (Judge Anything App. B.5: K = 32, ties score 0.5).

    The update is sequential by definition: each match uses the ratings left by the one before.
    """
    rows = list(rows)
    if not rows:
        raise UndefinedStatistic("Elo ratings: there are no comparisons")
    names, a, b, score_a = _scores(rows, use_judge)
    rating = np.full(len(names), start)
    for i, j, s in zip(a.tolist(), b.tolist(), score_a.tolist(), strict=True):
        expected_a = 1.0 / (1.0 + 10.0 ** ((rating[j] - rating[i]) / ELO_SCALE))
        rating[i] += k * (s - expected_a)
        rating[j] += k * ((1.0 - s) - (1.0 - expected_a))
    return {n: float(r) for n, r in zip(names, rating, strict=True)}


def bradley_terry(
    rows: Iterable[PairRow], use_judge: bool = False, tolerance: float = 1e-10, max_iterations: int = 10_000
) -> dict[str, float]:
    """Bradley–Terry strengths (summing to 1) by Hunter's (2004) MM algorithm; a tie is half a win each.

    The maximum-likelihood strengths exist only when every system both beats and is beaten through some
    chain of others (the win graph is strongly connected); otherwise this raises UndefinedStatistic.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    rows = list(rows)
    if not rows:
        raise UndefinedStatistic("Bradley–Terry: there are no comparisons")
    names, a, b, score_a = _scores(rows, use_judge)
    n = len(names)
    wins = np.zeros((n, n))
    np.add.at(wins, (a, b), score_a)
    np.add.at(wins, (b, a), 1.0 - score_a)
    n_components, labels = connected_components(csr_matrix(wins > 0), directed=True, connection="strong")
    if n_components > 1:
        groups = [sorted(names[i] for i in np.flatnonzero(labels == c)) for c in range(n_components)]
        shown = "; ".join(", ".join(g) for g in groups[:4])
        raise UndefinedStatistic(
            "Bradley–Terry strengths are undefined: some systems never lose (or never win) against the rest, "
            f"so their strength is unbounded. Groups without wins both ways: {shown}"
        )
    games = wins + wins.T
    total_wins = wins.sum(axis=1)
    strength = np.full(n, 1.0 / n)
    for _ in range(max_iterations):
        denominator = (games / (strength[:, None] + strength[None, :])).sum(axis=1)
        updated = total_wins / denominator
        updated /= updated.sum()
        if np.max(np.abs(updated - strength)) < tolerance:
            strength = updated
            break
        strength = updated
    return {name: float(s) for name, s in zip(names, strength, strict=True)}


SCORE_FIELDS = ("system", "item", "human", "judge")
PAIR_FIELDS = ("item", "a", "b", "human")


def _score_row(line: int, record: dict[str, Any], file: str, problems: list[Problem]) -> ScoreRow | None:
    numbers = {}
    for name in ("human", "judge"):
        try:
            numbers[name] = float(record[name])
        except (TypeError, ValueError):
            problems.append(Problem(f"{record[name]!r} is not a number", name, line, file))
    if len(numbers) < 2:
        return None
    bad = [n for n, v in numbers.items() if not np.isfinite(v)]
    problems += [Problem("not a finite number", n, line, file) for n in bad]
    criterion = str(record.get("criterion") or "overall")
    return None if bad else ScoreRow(str(record["system"]), str(record["item"]), criterion, **numbers)


def _pair_row(line: int, record: dict[str, Any], file: str, problems: list[Problem]) -> PairRow | None:
    judge = record.get("judge")
    judge = None if judge in (None, "") else str(judge).strip()
    human = str(record["human"]).strip()
    for name, value in (("human", human), ("judge", judge)):
        if value is not None and value not in OUTCOMES:
            problems.append(Problem(f"{value!r} is not one of A, B, tie", name, line, file))
    if str(record["a"]) == str(record["b"]):
        problems.append(Problem(f"system {record['a']!r} is compared with itself", "b", line, file))
    return PairRow(str(record["item"]), str(record["a"]), str(record["b"]), human, judge)


def read_judge_file(path: Path) -> tuple[str, list[ScoreRow] | list[PairRow]]:
    """Read judge and human outcomes: scores (system, item, [criterion,] human, judge) or pairs
    (item, a, b, human, [judge]); the kind is told by the presence of a ``system`` field."""
    from .ratings import read_records

    file = str(path)
    probe = read_records(path, ())  # the kind first; its fields are checked next
    kind = "scores" if probe and "system" in probe[0][1] else "pairs"
    required = SCORE_FIELDS if kind == "scores" else PAIR_FIELDS
    records = read_records(
        path, required, SCORE_FIELDS + ("criterion",) if kind == "scores" else PAIR_FIELDS + ("judge",)
    )
    if not records:
        raise UndefinedStatistic(f"{file} holds no rows")
    problems: list[Problem] = []
    rows: list[Any] = []  # one kind per file: all ScoreRow or all PairRow
    for line, record in records:
        missing = [name for name in required if record.get(name) in (None, "")]
        problems += [Problem("missing", name, line, file) for name in missing]
        if missing:
            continue
        row = (_score_row if kind == "scores" else _pair_row)(line, record, file, problems)
        if row is not None:
            rows.append(row)
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; fix them and try again")
    return kind, rows
