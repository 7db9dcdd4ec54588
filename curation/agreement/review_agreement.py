"""Agreement in a workspace's own review records (TRIAD §4.4, App. C.3; Omni-StoryBench App. F.5).

Four reports, each built from the records that still count for an item's current content (the latest
per reviewer, as the workflow sees them):

- blind answer check vs the author's label: Cohen's kappa and raw agreement, overall and per
  (author, reviewer) pair, with the label x answer confusion table;
- audio sign-off: ordinal Krippendorff's alpha per axis (items x listeners);
- subset checklist: nominal alpha over item x view x option decisions (consistent or not), overall
  and per view;
- taxonomy: when an item was tagged twice (the author's tags plus a second tagging from a tags file),
  nominal alpha per modality, agreement per leaf and the leaf x leaf disagreement (coincidence) matrix.

The report functions are pure (they take :class:`ReviewedItem` lists); :func:`load_reviewed_items`
reads a workspace.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from curation.errors import Problem, ValidationFailed
from curation.taxonomy import TAXONOMY
from curation.vocab import AUDIO_AXES, CHECKLIST_VIEWS, MODALITIES

from .alpha import coincidence_matrix, krippendorff_alpha, specific_agreement
from .errors import UndefinedStatistic
from .estimate import Estimate
from .kappa import cohen_kappa, raw_agreement
from .ratings import Ratings, ratings_from_rows

AUTHOR = "author"
BLIND = "blind"


@dataclass(frozen=True)
class ReviewedItem:
    """An item with the review records that count for its current content: stage -> [(reviewer, payload)].

    ``adjudicated`` names the stages a maintainer has settled by an override on the current revision.
    """

    id: str
    group: str
    author: str
    answer: str
    options: tuple[str, ...]
    taxonomy: Mapping[str, str]
    records: Mapping[str, list[tuple[str, Mapping[str, Any]]]] = field(default_factory=dict)
    adjudicated: frozenset[str] = frozenset()


@dataclass(frozen=True)
class TagRecord:
    """A second tagging of an item's ambiguity taxonomy (any subset of modalities)."""

    item: str
    tagger: str
    taxonomy: Mapping[str, str]


def load_reviewed_items(ws) -> list[ReviewedItem]:  # type: ignore[no-untyped-def]
    """Every item not discarded, with its valid review records (the workflow's own selection)."""
    from sqlalchemy import select
    from sqlmodel import col

    from curation.derived import load_derived
    from curation.tables import Item

    state = load_derived(ws)
    with ws.session() as s:
        taxonomy = dict(s.execute(select(col(Item.id), col(Item.taxonomy))).all())
    items = []
    for fact in state.facts.values():
        if fact.id in state.discarded:
            continue
        by_stage: dict[str, list[tuple[str, Mapping[str, Any]]]] = {
            stage: [(r.reviewer, r.payload) for r in state.records(fact.id, stage)]
            for stage in ("audio_signoff", "subset_checklist", "answer_check")
            if stage in state.kind(fact.id).stage_names
        }
        items.append(
            ReviewedItem(
                id=fact.id,
                group=fact.group,
                author=fact.author,
                answer=fact.answer,
                options=tuple(sorted(fact.options)),
                taxonomy=dict(taxonomy.get(fact.id) or {}),
                records=by_stage,
                adjudicated=frozenset(state.overrides(fact.id)),
            )
        )
    return items


def read_tags(path: Path, items: Iterable[ReviewedItem]) -> list[TagRecord]:
    """Read a second tagging, JSON Lines of ``{"item", "tagger", "taxonomy": {modality: leaf}}``."""
    from curation.jsonl import read_jsonl

    known = {i.id: i for i in items}
    problems: list[Problem] = []
    tags: list[TagRecord] = []
    seen: dict[tuple[str, str], int] = {}
    file = str(path)
    for line, obj in read_jsonl(path):
        if isinstance(obj, Problem):
            problems.append(obj)
            continue
        before = len(problems)
        for name in ("item", "tagger", "taxonomy"):
            if name not in obj:
                problems.append(Problem("required field is missing", name, line, file))
        unknown = sorted(set(obj) - {"item", "tagger", "taxonomy", "note"})
        problems += [Problem("unknown field", name, line, file) for name in unknown]
        if len(problems) > before:
            continue
        item, tagger, taxonomy = str(obj["item"]), str(obj["tagger"]), obj["taxonomy"]
        if item not in known:
            problems.append(Problem(f"unknown item {item!r}", "item", line, file))
            continue
        if tagger == known[item].author:
            problems.append(
                Problem(f"{tagger!r} authored {item!r}; the item's own tags are theirs", "tagger", line, file)
            )
            continue
        if not isinstance(taxonomy, dict) or not taxonomy:
            problems.append(Problem("must map modalities to leaves", "taxonomy", line, file))
            continue
        for modality, leaf in taxonomy.items():
            if modality not in TAXONOMY:
                problems.append(Problem(f"unknown modality {modality!r}", f"taxonomy.{modality}", line, file))
            elif leaf not in TAXONOMY[modality]:
                problems.append(
                    Problem(
                        f"unknown {modality} leaf {leaf!r}; expected one of {', '.join(TAXONOMY[modality])}",
                        f"taxonomy.{modality}",
                        line,
                        file,
                    )
                )
        first = seen.setdefault((item, tagger), line)
        if first != line:
            problems.append(Problem(f"{tagger!r} already tagged {item!r} on line {first}", "tagger", line, file))
        tags.append(TagRecord(item, tagger, dict(taxonomy)))
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; fix them and try again")
    return tags


def _statistic(compute: Callable[[], Estimate]) -> dict[str, Any]:
    """The estimate as a dict, or ``value: None`` with the reason when it is undefined (never NaN)."""
    try:
        estimate = compute()
    except UndefinedStatistic as exc:
        return {"value": None, "undefined": str(exc)}
    return {
        "value": estimate.value,
        "units": estimate.units,
        "coders": estimate.coders,
        "ratings": estimate.ratings,
        "undefined": None,
    }


def _ratings(rows: list[tuple[str, str, object]]) -> Ratings:
    return ratings_from_rows((0, {"unit": u, "coder": c, "value": v}) for u, c, v in rows)


def _ordinal_alpha(rows: list[tuple[str, str, object]]) -> Estimate:
    return krippendorff_alpha(_ratings(rows), "ordinal")


def _kappa_with_raw(rows: list[tuple[str, str, object]]) -> dict[str, Any]:
    if not rows:
        return {"value": None, "undefined": "no blind answer checks", "raw_agreement": None}
    ratings = _ratings(rows)
    report = _statistic(lambda: cohen_kappa(ratings))
    report["raw_agreement"] = raw_agreement(ratings)
    return report


def answer_agreement(items: Iterable[ReviewedItem]) -> dict[str, Any]:
    """Blind answer vs label: kappa and raw agreement overall and per (author, reviewer) pair."""
    rows_by_pair: dict[tuple[str, str], list[tuple[str, str, object]]] = defaultdict(list)
    confusion: dict[tuple[str, str], int] = defaultdict(int)
    for item in items:
        for reviewer, payload in item.records.get("answer_check", []):
            unit = f"{item.id}|{reviewer}"
            pair = rows_by_pair[(item.author, reviewer)]
            pair += [(unit, AUTHOR, item.answer), (unit, BLIND, payload["answer"])]
            confusion[(item.answer, payload["answer"])] += 1
    everything = [row for rows in rows_by_pair.values() for row in rows]
    options = sorted({k for pair in confusion for k in pair})
    return {
        "overall": _kappa_with_raw(everything),
        "pairs": [
            {"author": author, "reviewer": reviewer, **_kappa_with_raw(rows)}
            for (author, reviewer), rows in sorted(rows_by_pair.items())
        ],
        "confusion": {
            "labels": options,
            "counts": [[confusion.get((label, answer), 0) for answer in options] for label in options],
        },
    }


def audio_agreement(items: Iterable[ReviewedItem]) -> dict[str, Any]:
    """Ordinal alpha of audio sign-off scores per axis, items x listeners."""
    rows: dict[str, list[tuple[str, str, object]]] = {axis: [] for axis in AUDIO_AXES}
    for item in items:
        for reviewer, payload in item.records.get("audio_signoff", []):
            for axis in AUDIO_AXES:
                rows[axis].append((item.id, reviewer, payload["scores"][axis]))
    return {
        axis: _statistic(partial(_ordinal_alpha, axis_rows))
        if axis_rows
        else {"value": None, "undefined": "no audio sign-off scores"}
        for axis, axis_rows in rows.items()
    }


def checklist_decisions(items: Iterable[ReviewedItem]) -> dict[str, list[tuple[str, str, object]]]:
    """Per view, (item|view|option, reviewer, 1 if consistent else 0) for every option of every item."""
    rows: dict[str, list[tuple[str, str, object]]] = {view: [] for view in CHECKLIST_VIEWS}
    for item in items:
        for reviewer, payload in item.records.get("subset_checklist", []):
            consistent = payload["consistent"]
            for view in CHECKLIST_VIEWS:
                marked = set(consistent.get(view, []))
                rows[view] += [(f"{item.id}|{view}|{o}", reviewer, int(o in marked)) for o in item.options]
    return rows


def checklist_agreement(items: Iterable[ReviewedItem]) -> dict[str, Any]:
    """Nominal alpha over item x view x option decisions, over all views and per view."""
    rows = checklist_decisions(items)
    everything = [row for view_rows in rows.values() for row in view_rows]

    def alpha(view_rows: list[tuple[str, str, object]]) -> dict[str, Any]:
        if not view_rows:
            return {"value": None, "undefined": "no subset checklists"}
        return _statistic(lambda: krippendorff_alpha(_ratings(view_rows), "nominal"))

    return {"all": alpha(everything), "views": {view: alpha(view_rows) for view, view_rows in rows.items()}}


def taxonomy_agreement(items: Iterable[ReviewedItem], tags: Iterable[TagRecord]) -> dict[str, Any]:
    """Per modality, over items tagged twice: alpha, per-leaf agreement and the disagreement matrix."""
    items = list(items)
    extra: dict[str, list[TagRecord]] = defaultdict(list)
    for tag in tags:
        extra[tag.item].append(tag)
    report: dict[str, Any] = {}
    for modality in MODALITIES:
        rows: list[tuple[str, str, object]] = []
        for item in items:
            second = [(t.tagger, t.taxonomy[modality]) for t in extra.get(item.id, []) if modality in t.taxonomy]
            if second and modality in item.taxonomy:
                rows.append((item.id, item.author, item.taxonomy[modality]))
                rows += [(item.id, tagger, leaf) for tagger, leaf in second]
        report[modality] = _taxonomy_modality(modality, rows)
    return report


def _taxonomy_modality(modality: str, rows: list[tuple[str, str, object]]) -> dict[str, Any]:
    leaves = list(TAXONOMY[modality])
    if not rows:
        return {
            "items": 0,
            "alpha": {"value": None, "undefined": "no item was tagged twice"},
            "leaves": leaves,
            "per_leaf": {},
            "disagreement": [],
        }
    ratings = _ratings(rows)
    observed = coincidence_matrix(ratings)
    index = [leaves.index(str(v)) for v in ratings.values]
    matrix = np.zeros((len(leaves), len(leaves)))
    matrix[np.ix_(index, index)] = observed
    per_leaf = specific_agreement(matrix)
    return {
        "items": len(ratings.units),
        "alpha": _statistic(lambda: krippendorff_alpha(ratings, "nominal")),
        "raw_agreement": float(np.trace(matrix) / matrix.sum()) if matrix.sum() else None,
        "leaves": leaves,
        "per_leaf": {leaf: float(a) for leaf, a in zip(leaves, per_leaf, strict=True) if np.isfinite(a)},
        "disagreement": matrix.round(6).tolist(),
    }


def agreement_report(items: list[ReviewedItem], tags: Iterable[TagRecord] = ()) -> dict[str, Any]:
    """All four reports, as one JSON-ready document."""
    return {
        "items": len(items),
        "answer_check": answer_agreement(items),
        "audio_signoff": audio_agreement(items),
        "subset_checklist": checklist_agreement(items),
        "taxonomy": taxonomy_agreement(items, tags),
    }
