"""Per-leaf agreement and the disagreement matrices on the audit subset (TRIAD App. C.3).

"Per-leaf IAA and the disagreement matrix are released together with the dataset": on the held-out audit
subset, for each of C.3's three labels (the blind answer against the author's label, the ambiguity tier tag
against a checklist reviewer's, two listeners' binary naturalness), the agreement per taxonomy leaf and the
confusion of the two coders' values (first coder in rows, second in columns), overall and per leaf. So a
reader sees where disagreements concentrate (which leaves, which values). Reported, never a gate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from curation.vocab import MODALITIES

from .review_agreement import (
    ReviewedItem,
    answer_rows,
    audit_subset,
    naturalness_rows,
    per_leaf_agreement,
    tier_rows,
)

Rows = list[tuple[str, str, object]]
TIER_VALUES = {0: "not_ambiguous", 1: "ambiguous"}
LABELS: dict[str, tuple[str, str]] = {
    "answer_check": ("author", "blind"),
    "tier_tag": ("author", "reviewer"),
    "naturalness": ("listener1", "listener2"),
}
"""Each label's two coders: the matrix's rows are the first coder's values, its columns the second's."""


def confusion(rows: Rows, coders: tuple[str, str]) -> dict[str, Any]:
    """The two coders' values per unit as a count matrix, with how many units they disagree on."""
    by_unit: dict[str, dict[str, str]] = defaultdict(dict)
    for unit, coder, value in rows:
        by_unit[unit][coder] = str(value)
    pairs = [(v[coders[0]], v[coders[1]]) for v in by_unit.values() if coders[0] in v and coders[1] in v]
    categories = sorted({value for pair in pairs for value in pair})
    index = {value: n for n, value in enumerate(categories)}
    counts = [[0] * len(categories) for _ in categories]
    for first, second in pairs:
        counts[index[first]][index[second]] += 1
    return {
        "coders": list(coders),
        "categories": categories,
        "counts": counts,
        "pairs": len(pairs),
        "disagreements": sum(first != second for first, second in pairs),
    }


def _tier(items: Sequence[ReviewedItem], modality: str | None = None) -> Rows:
    return [(unit, coder, TIER_VALUES[int(value)]) for unit, coder, value in tier_rows(items, modality)]  # type: ignore[call-overload]


def _label_rows(min_mean: float) -> dict[str, Callable[[Sequence[ReviewedItem], str | None], Rows]]:
    """Each label's rows over items; the tier tag is read for the leaf's own modality only."""
    return {
        "answer_check": lambda members, _m: answer_rows(members),
        "tier_tag": _tier,
        "naturalness": lambda members, _m: naturalness_rows(members, min_mean),
    }


def disagreement_matrices(items: Sequence[ReviewedItem], min_mean: float = 3.5) -> dict[str, Any]:
    """Per label: the overall confusion and one per taxonomy leaf of each modality."""
    leaves: dict[str, dict[str, list[ReviewedItem]]] = {m: defaultdict(list) for m in MODALITIES}
    for item in items:
        for modality, leaf in item.taxonomy.items():
            if modality in leaves:
                leaves[modality][leaf].append(item)
    report: dict[str, Any] = {}
    for label, rows_of in _label_rows(min_mean).items():
        coders = LABELS[label]
        report[label] = {
            "overall": confusion(rows_of(items, None), coders),
            "per_leaf": {
                modality: {
                    leaf: confusion(rows_of(members, modality), coders) for leaf, members in sorted(found.items())
                }
                for modality, found in leaves.items()
            },
        }
    return report


def audit_subset_tables(
    items: Sequence[ReviewedItem], *, subset_size: int = 50, subset_seed: int = 0, min_mean: float = 3.5
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(per_leaf, disagreement_matrix)`` documents for the audit subset drawn from ``items``."""
    subset = audit_subset(items, subset_size, subset_seed)
    about = {
        "size": subset_size,
        "seed": subset_seed,
        "stratified_by": "perturbed",
        "items": len(subset),
        "all_items": len(subset) == len(items),
        "ids": [item.id for item in subset],
    }
    per_leaf = {"audit_subset": about, "per_leaf": per_leaf_agreement(subset, min_mean)}
    matrix = {"audit_subset": about, "labels": disagreement_matrices(subset, min_mean)}
    return per_leaf, matrix
