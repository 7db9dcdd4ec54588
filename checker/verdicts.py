"""Item verdicts from consistent sets (TRIAD Definition 1) and the dataset summary.

The verdict is the first that applies of ``label_mismatch`` (the label is not in the full view's set),
``underdetermined`` (the full view admits more than one option), ``reducible`` (some strict non-empty view
already narrows the options to fewer than two), else ``well_posed``. The same logic judges human checklist
sets, so probe and human verdicts can be compared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from curation.vocab import CHECKLIST_VIEWS, MODALITIES, modality_set, strict_views_of, view_modalities, view_name

from .estimators import ViewEstimate, union_estimate
from .views import FULL_VIEW, PROBE_VIEWS

VERDICTS: tuple[str, ...] = ("label_mismatch", "underdetermined", "reducible", "well_posed")


@dataclass(frozen=True)
class Judgement:
    verdict: str
    reducible_by: list[str]
    warnings: list[str]


def judge_sets(answer: str, sets: Mapping[str, Sequence[str]]) -> Judgement:
    """Verdict, reducible views and warnings from the consistent set of each view.

    Views absent from ``sets`` are not judged. An empty set (every answer unparseable, or no option
    reached the threshold) counts as it does in Definition 1 (fewer than two options) and also gives an
    ``empty_view:<view>`` warning, since it more often means the probe failed than that the item did.
    """
    warnings: list[str] = []
    own = modality_set({m for v in sets for m in view_modalities(v)}) or MODALITIES
    full_view = view_name(set(own))
    full = set(sets.get(full_view, ()))
    reducible_by: list[str] = []
    for view in strict_views_of(own):
        if view not in sets:
            continue
        size = len(set(sets[view]))
        if size == 0:
            warnings.append(f"empty_view:{view}")
        if size < 2:
            reducible_by.append(view)
    if not full:
        warnings.append(f"empty_view:{full_view}")
    if full == {answer}:
        for modality in own:
            rest = view_name(set(own) - {modality})
            if rest in sets and not set(sets[rest]) > full:
                warnings.append(f"not_enlarging:{modality}")
    prior = sets.get("none")
    if prior is not None and len(set(prior)) == 1:
        warnings.append(f"option_prior:{next(iter(prior))}")
    if answer not in full:
        verdict = "label_mismatch"
    elif len(full) > 1:
        verdict = "underdetermined"
    elif reducible_by:
        verdict = "reducible"
    else:
        verdict = "well_posed"
    return Judgement(verdict, reducible_by, warnings)


@dataclass
class ItemResult:
    """An item's probe outcome: the estimate per view and the verdict drawn from them.

    ``unprobed`` lists the item's views that no probe answered (a replay file in TRIAD's layout of the
    three pairs and the full triplet): the verdict is Definition 1 over the probed views only, so
    ``label_mismatch``, ``underdetermined`` and ``reducible`` hold as they are, while ``well_posed`` means
    that no probed view narrows the options (an unprobed single could still).
    """

    item: str
    label: str
    views: dict[str, ViewEstimate]
    verdict: str = ""
    reducible_by: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unprobed: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        judgement = judge_sets(self.label, {v: e.consistent for v, e in self.views.items()})
        self.verdict, self.reducible_by, self.warnings = (
            judgement.verdict,
            judgement.reducible_by,
            judgement.warnings,
        )

    @property
    def modal_full(self) -> str | None:
        estimate = self.views.get(max(self.views, key=lambda v: len(view_modalities(v)), default=FULL_VIEW))
        return estimate.modal if estimate else None

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "verdict": self.verdict,
            "reducible_by": self.reducible_by,
            "label": self.label,
            "modal_full": self.modal_full,
            "modal_matches_label": self.modal_full == self.label,
            "warnings": self.warnings,
            "unprobed": self.unprobed,
            "views": {v: self.views[v].to_json() for v in PROBE_VIEWS if v in self.views},
        }


def union_results(per_probe: Mapping[str, Sequence[ItemResult]]) -> list[ItemResult]:
    """Items judged on the union of several probes' sets (TRIAD App. D.2: "either configured probe").

    Every probe must have judged the same items in the same order; one probe's results come back as they are.
    """
    if len(per_probe) == 1:
        return list(next(iter(per_probe.values())))
    runs = list(per_probe.items())
    combined = []
    for position, first in enumerate(runs[0][1]):
        results = {name: results[position] for name, results in runs}
        if any(r.item != first.item for r in results.values()):
            raise ValueError("the probes judged different items; union needs the same items in the same order")
        keys = list(next(iter(first.views.values())).counts or next(iter(first.views.values())).probs or {})
        views = {
            view: union_estimate(view, {name: r.views[view] for name, r in results.items()}, keys)
            for view in PROBE_VIEWS
            if all(view in r.views for r in results.values())
        }
        own = {v for r in results.values() for v in [*r.views, *r.unprobed]}
        unprobed = [v for v in PROBE_VIEWS if v in own and v not in views]  # a view one probe lacks
        combined.append(ItemResult(first.item, first.label, views, unprobed=unprobed))
    return combined


def verdict_kappa(pairs: Sequence[tuple[str, str, str]]) -> tuple[float | None, str | None]:
    """Cohen's κ between probe and human verdicts (``(item, probe, human)``), or why it is undefined."""
    from curation.agreement import UndefinedStatistic, cohen_kappa, ratings_from_rows

    if not pairs:
        return None, "no probed item has a complete human checklist"
    rows = [
        (n, {"unit": item, "coder": coder, "value": verdict})
        for n, (item, probe, human) in enumerate(pairs, start=1)
        for coder, verdict in (("probe", probe), ("human", human))
    ]
    try:
        return cohen_kappa(ratings_from_rows(rows)).value, None
    except UndefinedStatistic as exc:
        return None, str(exc)


def summarize(
    results: Sequence[ItemResult],
    human_sets: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Verdict counts, share reducible per view, modal-vs-label, and agreement with the human checklist.

    ``human_sets`` maps item id to the combined checklist sets of its 7 views; ``labels`` the item's answer
    (defaults to each result's label).
    """
    n = len(results)
    verdicts = Counter(r.verdict for r in results)
    reducible_share = {}
    for view in CHECKLIST_VIEWS:
        if view != FULL_VIEW:  # over the items whose view was probed
            probed = [r for r in results if view in r.views]
            reducible_share[view] = sum(view in r.reducible_by for r in probed) / len(probed) if probed else None
    summary: dict[str, Any] = {
        "items": n,
        "verdicts": {v: verdicts.get(v, 0) for v in VERDICTS},
        "reducible_share": reducible_share,
        "modal_matches_label": (sum(r.modal_full == r.label for r in results) / n if n else None),
        "option_prior_warnings": sum(any(w.startswith("option_prior:") for w in r.warnings) for r in results),
        "unprobed_views": dict(sorted(Counter(v for r in results for v in r.unprobed).items())),
    }
    if human_sets is not None:
        pairs: list[tuple[str, str, str]] = []
        disagreements: list[dict[str, str]] = []
        for result in results:
            sets = human_sets.get(result.item)
            if not sets:
                continue
            label = (labels or {}).get(result.item, result.label)
            # compared over the views the probe answered: an unprobed view cannot disagree
            human = judge_sets(label, {v: s for v, s in sets.items() if v not in result.unprobed}).verdict
            pairs.append((result.item, result.verdict, human))
            if human != result.verdict:
                disagreements.append({"item": result.item, "probe": result.verdict, "human": human})
        kappa, why_undefined = verdict_kappa(pairs)
        agreement: dict[str, Any] = {"items": len(pairs), "kappa": kappa, "disagreements": disagreements}
        if why_undefined:
            agreement["why_undefined"] = why_undefined
        summary["human_agreement"] = agreement
    return summary
