"""Human Acc_q and Acc_g on the campaign's subset, with group-level bootstrap intervals, beside the random baseline.

Per form, an answer scores 1 or 0 (Standard: the key matches the label; open-ended: the mean of its graders'
verdicts, TRIAD's mean judge score; an ungraded answer does not count yet, nor does an answer to an item
that has changed since). An item's score is the mean over
its raters who answered; Acc_q is the mean over scored items, so with one set of raters it is the mean of the
raters' accuracies (TRIAD: "the mean of three raters"). A group (its sisters in the subset) scores, per rater who
answered all of them, the product of their scores — 1 only when every sister is right — and Acc_g is the mean
over groups of the mean over their raters. Intervals resample scene groups (``agreement.bootstrap``).
Random (TRIAD E.7): Acc_q = mean of 1/|options|, Acc_g = mean over groups of the product of 1/|options|, on the
subset and on the pool it was drawn from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import prod
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlmodel import col

from ..agreement.bootstrap import percentile_interval
from ..agreement.errors import UndefinedStatistic
from ..reference_tables import BaselineAnswer
from ..tables import Item
from ..workspace import Workspace
from .campaign import FORMS, answers_of, assignments_of, get_campaign, grades_of


def _score(answer: BaselineAnswer, label: str, grades: Mapping[int, Sequence[Any]]) -> float | None:
    if answer.form == "standard":
        return 1.0 if answer.answer == label else 0.0
    verdicts = grades.get(answer.id or 0, [])
    return sum(1.0 for g in verdicts if g.correct) / len(verdicts) if verdicts else None


def random_baseline(options: Mapping[str, int], group_of: Mapping[str, str]) -> dict[str, float | int]:
    """TRIAD E.7's expected accuracy of uniform guessing over these items' option counts and groups."""
    groups: dict[str, list[int]] = {}
    for item, n in options.items():
        groups.setdefault(group_of[item], []).append(n)
    return {
        "acc_q": sum(1 / n for n in options.values()) / len(options),
        "acc_g": sum(prod(1 / n for n in ns) for ns in groups.values()) / len(groups),
        "items": len(options),
        "groups": len(groups),
    }


def _form_figures(
    scores: Mapping[str, Mapping[str, float]], group_of: Mapping[str, str], resamples: int, seed: int, confidence: float
) -> dict[str, Any]:
    """Acc_q and Acc_g of one form from item -> rater -> score."""
    groups: dict[str, list[str]] = {}
    for item in sorted(scores):
        groups.setdefault(group_of[item], []).append(item)
    names = sorted(groups)
    item_sum = np.zeros(len(names))
    item_n = np.zeros(len(names))
    group_score = np.zeros(len(names))
    group_has = np.zeros(len(names))
    for g, group in enumerate(names):
        members = groups[group]
        item_sum[g] = sum(sum(scores[i].values()) / len(scores[i]) for i in members)
        item_n[g] = len(members)
        complete = set.intersection(*(set(scores[i]) for i in members))
        if complete:
            group_score[g] = sum(prod(scores[i][r] for i in members) for r in complete) / len(complete)
            group_has[g] = 1
    out: dict[str, Any] = {"scored_items": int(item_n.sum()), "groups": len(names)}
    if not names:
        out["acc_q"] = out["acc_g"] = {"value": None, "undefined": "no scored answers yet"}
        return out

    def acc_q(w: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (w @ item_sum) / (w @ item_n)

    def acc_g(w: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (w @ (group_score * group_has)) / (w @ group_has)

    ones = np.ones((1, len(names)))
    for key, statistic in (("acc_q", acc_q), ("acc_g", acc_g)):
        value = float(statistic(ones)[0])
        if not np.isfinite(value):
            out[key] = {"value": None, "undefined": "no rater has answered every sister of any group"}
            continue
        figure: dict[str, Any] = {"value": value}
        try:
            figure["ci"] = percentile_interval(statistic, len(names), resamples, seed, confidence).as_dict()
        except UndefinedStatistic as exc:
            figure["ci"] = {"undefined": str(exc)}
        out[key] = figure
    return out


def baseline_report(ws: Workspace, name: str, resamples: int, seed: int, confidence: float) -> dict[str, Any]:
    """The campaign's report (the ``--json`` document)."""
    with ws.session() as s:
        campaign = get_campaign(s, name)
        assigned = assignments_of(s, name)
        answers = answers_of(s, name)
        grades = grades_of(s, [a.id for a in answers if a.id is not None])
        rows = {
            r.id: r
            for r in s.execute(
                select(Item).where(col(Item.id).in_(list(campaign.pool) + list(campaign.items)))
            ).scalars()
        }
    group_of = {i: r.group_id for i, r in rows.items()}
    forms: dict[str, Any] = {}
    by_rater: dict[str, dict[str, list[float]]] = {}
    for form in FORMS:
        scores: dict[str, dict[str, float]] = {}
        ungraded = stale = 0
        for a in answers:
            if a.form != form or a.item_id not in rows:
                continue
            if a.content_hash != rows[a.item_id].content_hash:
                stale += 1  # the item changed after this answer: it answered another question
                continue
            score = _score(a, rows[a.item_id].answer, grades)
            if score is None:
                ungraded += 1
                continue
            scores.setdefault(a.item_id, {})[a.rater] = score
            by_rater.setdefault(a.rater, {}).setdefault(form, []).append(score)
        figures = _form_figures(scores, group_of, resamples, seed, confidence)
        figures["answers"] = sum(1 for a in answers if a.form == form)
        figures["ungraded"] = ungraded
        figures["stale"] = stale
        forms[form] = figures
    subset_options = {i: len(rows[i].options) for i in campaign.items if i in rows}
    pool_options = {i: len(rows[i].options) for i in campaign.pool if i in rows}
    return {
        "campaign": name,
        "seed": campaign.seed,
        "items": len(campaign.items),
        "groups": len({group_of[i] for i in subset_options}),
        "raters_per_item": campaign.raters_per_item,
        "assignments": sum(len(rs) for rs in assigned.values()),
        "human": {"standard": forms["standard"], "open_ended": forms["open"]},
        "by_rater": {
            r: {f if f == "standard" else "open_ended": sum(v) / len(v) for f, v in per.items()}
            for r, per in sorted(by_rater.items())
        },
        "random": {
            "subset": random_baseline(subset_options, group_of),
            "pool": random_baseline(pool_options, group_of),
        },
        "note": "human figures are on the stratified subset and reported separately (TRIAD §5.1, Table 7)",
    }
