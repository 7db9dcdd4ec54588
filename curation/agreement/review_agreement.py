"""Agreement in a workspace's own review records (TRIAD §4.4, App. C.3; Omni-StoryBench App. F.5).

Four reports, each built from the records that still count for an item's current content (the latest
per reviewer, as the workflow sees them):

- blind answer check vs the author's label: Cohen's kappa and raw agreement, overall and per
  (author, reviewer) pair, with the label x answer confusion table;
- audio sign-off: ordinal Krippendorff's alpha per axis (items x listeners);
- subset checklist: nominal alpha over item x view x option decisions (consistent or not), overall
  and per view;
- taxonomy: when an item was tagged twice (the author's tags plus a second tagging from a tags file),
  nominal alpha per modality, agreement per leaf and the leaf x leaf disagreement (coincidence) matrix;
- TRIAD C.3's three labels: the blind answer (above), the ambiguity tier tag (the author's ``ambiguous``
  list against the one a checklist reviewer may give) and binary audio naturalness (admit / re-record per
  listener), each also per taxonomy leaf, on all items and on a held-out audit subset (fifty queries,
  seeded, stratified by the group's perturbed modality).

These are reported, never gates; an undefined value comes with its reason.

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
from .ratings import Ratings, ratings_from_triples

AUTHOR = "author"
BLIND = "blind"


@dataclass(frozen=True)
class ReviewedItem:
    """An item with the review records that count for its current content: stage -> [(reviewer, payload)].

    ``adjudicated`` names the stages a maintainer has settled (an override on the current revision, or a
    consensus checklist on the current content); ``held_for`` the reasons a stage holds the item for
    (``checklist:disagreement``).
    """

    id: str
    group: str
    author: str
    answer: str
    options: tuple[str, ...]
    taxonomy: Mapping[str, str]
    records: Mapping[str, list[tuple[str, Mapping[str, Any]]]] = field(default_factory=dict)
    adjudicated: frozenset[str] = frozenset()
    ambiguous: tuple[str, ...] = ()
    """The author's ambiguity tags (the item's tier is their number)."""
    perturbed: str = ""
    """The group's perturbed modality: the audit subset's strata."""
    held_for: tuple[str, ...] = ()


@dataclass(frozen=True)
class TagRecord:
    """A second tagging of an item's ambiguity taxonomy (any subset of modalities)."""

    item: str
    tagger: str
    taxonomy: Mapping[str, str]


def load_reviewed_items(ws, state=None) -> list[ReviewedItem]:  # type: ignore[no-untyped-def]
    """Every item not discarded, with its valid review records (the workflow's own selection); ``state``:
    a derived state (``curation.derived``) the caller already loaded, so that nothing is derived twice."""
    from sqlalchemy import select
    from sqlmodel import col

    from curation.derived import load_derived
    from curation.tables import Item

    state = load_derived(ws) if state is None else state
    with ws.session() as s:
        taxonomy = dict(s.execute(select(col(Item.id), col(Item.taxonomy))).all())
        ambiguous = dict(s.execute(select(col(Item.id), col(Item.ambiguous))).all())
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
                adjudicated=frozenset(state.overrides(fact.id))
                | (
                    {"subset_checklist"}
                    if "subset_checklist" in by_stage and state.consensus(fact.id) is not None
                    else set()
                ),
                held_for=tuple(r for r in state.status_by_id[fact.id].reasons if r == "checklist:disagreement"),
                ambiguous=tuple(ambiguous.get(fact.id) or ()),
                perturbed=state.perturbed.get(fact.group, ""),
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
            problems.append(Problem(f"unknown item {item!r} (`curate status` lists the items)", "item", line, file))
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
    return ratings_from_triples(rows)


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


NATURAL = "admit"
RERECORD = "re-record"


def audit_subset(items: Iterable[ReviewedItem], size: int, seed: int = 0) -> list[ReviewedItem]:
    """A held-out audit subset of ``size`` items (all when there are no more), in id order.

    Stratified by the group's perturbed modality with proportional allocation (largest remainders, ties by
    stratum name), then a seeded draw inside each stratum: the same items and seed give the same subset.
    """
    import random

    pool = sorted(items, key=lambda i: i.id)
    if len(pool) <= size:
        return pool
    strata: dict[str, list[ReviewedItem]] = defaultdict(list)
    for item in pool:
        strata[item.perturbed].append(item)
    exact = {name: size * len(members) / len(pool) for name, members in strata.items()}
    quota = {name: int(share) for name, share in exact.items()}
    by_remainder = sorted(strata, key=lambda name: (-(exact[name] - quota[name]), name))
    for name in by_remainder[: size - sum(quota.values())]:
        quota[name] += 1
    rng = random.Random(seed)
    chosen = [item for name in sorted(strata) for item in rng.sample(strata[name], quota[name])]
    return sorted(chosen, key=lambda i: i.id)


def _kappa_report(rows: list[tuple[str, str, object]], nothing: str) -> dict[str, Any]:
    """Cohen's kappa with raw agreement, or ``value: None`` and why."""
    if not rows:
        return {"value": None, "undefined": nothing, "raw_agreement": None}
    ratings = _ratings(rows)
    report = _statistic(lambda: cohen_kappa(ratings))
    try:
        report["raw_agreement"] = raw_agreement(ratings)
    except UndefinedStatistic:
        report["raw_agreement"] = None
    return report


def tier_rows(items: Iterable[ReviewedItem], modality: str | None = None) -> list[tuple[str, str, object]]:
    """Author vs reviewer, per item x modality x reviewer: is the modality tagged ambiguous (1) or not (0)."""
    rows: list[tuple[str, str, object]] = []
    for item in items:
        for reviewer, payload in item.records.get("subset_checklist", []):
            tagged = payload.get("ambiguous")
            if tagged is None:
                continue
            for m in [modality] if modality else MODALITIES:
                unit = f"{item.id}|{m}|{reviewer}"
                rows += [(unit, AUTHOR, int(m in item.ambiguous)), (unit, "reviewer", int(m in tagged))]
    return rows


def tier_tag_agreement(items: Iterable[ReviewedItem]) -> dict[str, Any]:
    """Kappa of the ambiguity tier tag: per modality tag (pooled and per modality) and on the tier (1-3)."""
    items = list(items)
    nothing = "no subset-checklist record carries its reviewer's ambiguous list"
    tiers: list[tuple[str, str, object]] = []
    for item in items:
        for reviewer, payload in item.records.get("subset_checklist", []):
            if payload.get("ambiguous") is not None:
                unit = f"{item.id}|{reviewer}"
                tiers += [(unit, AUTHOR, len(item.ambiguous)), (unit, "reviewer", len(payload["ambiguous"]))]
    return {
        "overall": _kappa_report(tier_rows(items), nothing),
        "modalities": {m: _kappa_report(tier_rows(items, m), nothing) for m in MODALITIES},
        "tier": _kappa_report(tiers, nothing),
    }


def naturalness_agreement(items: Iterable[ReviewedItem], min_mean: float = 3.5) -> dict[str, Any]:
    """Kappa of binary naturalness: each listener's admit (every axis at least ``min_mean``) or re-record.

    The first and second listener of each item (in record order) are the two coders, as in TRIAD B.4 where
    two listeners rate every clip; items with fewer than two listeners are left out.
    """
    return _kappa_report(naturalness_rows(items, min_mean), "no item has two audio listeners")


def naturalness_rows(items: Iterable[ReviewedItem], min_mean: float = 3.5) -> list[tuple[str, str, object]]:
    """``(item, listener1|listener2, admit|re-record)`` for items with two listeners."""
    rows: list[tuple[str, str, object]] = []
    for item in items:
        listeners = item.records.get("audio_signoff", [])[:2]
        if len(listeners) < 2:
            continue
        for position, (_reviewer, payload) in enumerate(listeners, start=1):
            natural = all(payload["scores"][axis] >= min_mean for axis in AUDIO_AXES)
            rows.append((item.id, f"listener{position}", NATURAL if natural else RERECORD))
    return rows


def answer_rows(items: Iterable[ReviewedItem]) -> list[tuple[str, str, object]]:
    rows: list[tuple[str, str, object]] = []
    for item in items:
        for reviewer, payload in item.records.get("answer_check", []):
            unit = f"{item.id}|{reviewer}"
            rows += [(unit, AUTHOR, item.answer), (unit, BLIND, payload["answer"])]
    return rows


def per_leaf_agreement(items: Iterable[ReviewedItem], min_mean: float = 3.5) -> dict[str, Any]:
    """Per taxonomy leaf of each modality: answer, tier-tag (that modality) and naturalness agreement."""
    items = list(items)
    report: dict[str, Any] = {}
    for modality in MODALITIES:
        leaves: dict[str, list[ReviewedItem]] = defaultdict(list)
        for item in items:
            if modality in item.taxonomy:
                leaves[item.taxonomy[modality]].append(item)
        report[modality] = {
            leaf: {
                "items": len(members),
                "answer_check": _kappa_report(answer_rows(members), "no blind answer checks"),
                "tier_tag": _kappa_report(
                    tier_rows(members, modality), "no subset-checklist record carries an ambiguous list"
                ),
                "naturalness": naturalness_agreement(members, min_mean),
            }
            for leaf, members in sorted(leaves.items())
        }
    return report


def triad_labels(items: list[ReviewedItem], min_mean: float = 3.5) -> dict[str, Any]:
    """TRIAD C.3's three labels and the checklist on a set of items."""
    return {
        "items": len(items),
        "answer_check": answer_agreement(items)["overall"],
        "tier_tag": tier_tag_agreement(items),
        "naturalness": naturalness_agreement(items, min_mean),
        "subset_checklist": checklist_agreement(items)["all"],
    }


def gated_statistics(items: list[ReviewedItem]) -> dict[str, Any]:
    """The reports the agreement gates judge (``curation.agreement.gates``), keyed as in
    :func:`agreement_report`: computed once where a caller both gates and reports on the same items (the
    checklist's alpha is most of a report's cost)."""
    return {
        "answer_check": answer_agreement(items),
        "audio_signoff": audio_agreement(items),
        "subset_checklist": checklist_agreement(items),
    }


def agreement_report(
    items: list[ReviewedItem],
    tags: Iterable[TagRecord] = (),
    *,
    subset_size: int = 50,
    subset_seed: int = 0,
    min_mean: float = 3.5,
    gated: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every report, as one JSON-ready document; ``audit_subset`` repeats TRIAD's labels on the subset.
    ``gated``: :func:`gated_statistics` of these same items, when the caller has them."""
    subset = audit_subset(items, subset_size, subset_seed)
    gated = gated_statistics(items) if gated is None else gated
    return {
        "items": len(items),
        "answer_check": gated["answer_check"],
        "audio_signoff": gated["audio_signoff"],
        "subset_checklist": gated["subset_checklist"],
        "taxonomy": taxonomy_agreement(items, tags),
        "tier_tag": tier_tag_agreement(items),
        "naturalness": naturalness_agreement(items, min_mean),
        "per_leaf": per_leaf_agreement(items, min_mean),
        "audit_subset": {
            "size": subset_size,
            "seed": subset_seed,
            "stratified_by": "perturbed",
            "all_items": len(subset) == len(items),
            "ids": [item.id for item in subset],
            **triad_labels(subset, min_mean),
        },
    }


def workspace_agreement_report(  # type: ignore[no-untyped-def]
    ws, items: list[ReviewedItem], tags: Iterable[TagRecord] = (), gated: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """:func:`agreement_report` with the workspace's settings (audit subset size and seed, audio threshold)."""
    return agreement_report(
        items,
        tags,
        subset_size=ws.settings.agreement.audit_subset,
        subset_seed=ws.settings.agreement.audit_seed,
        min_mean=ws.settings.review.audio_min_mean,
        gated=gated,
    )
