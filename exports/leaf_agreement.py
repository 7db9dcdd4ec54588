"""agreement/per_leaf.json and agreement/disagreement_matrix.json in every mcq release (TRIAD App. C.3).

Computed on the audit subset of the released items; reported, never a gate. The files are written before
the manifest, so the manifest lists them with their SHA-256 and ``curate release verify`` checks them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from curation.workspace import Workspace

from .writer import FileEntry, ReleaseWriter

PER_LEAF = "agreement/per_leaf.json"
MATRIX = "agreement/disagreement_matrix.json"
FILES = {
    PER_LEAF: "Agreement per taxonomy leaf on the audit subset: blind answer vs label (Cohen's kappa), ambiguity "
    "tier tag (kappa, the leaf's modality), audio naturalness (kappa), with raw agreement.",
    MATRIX: "Disagreement matrices on the audit subset: per label, the two coders' values as a count matrix "
    "(first coder in rows), overall and per taxonomy leaf.",
}


def leaf_agreement_report(ws: Workspace, released: Sequence[str]) -> dict[str, Any]:
    """Both documents for the released items, with the workspace's audit-subset size, seed and audio threshold."""
    from curation.agreement.leaf_tables import audit_subset_tables

    from .build_state import reviewed_items

    wanted = set(released)
    per_leaf, matrix = audit_subset_tables(
        [item for item in reviewed_items(ws) if item.id in wanted],
        subset_size=ws.settings.agreement.audit_subset,
        subset_seed=ws.settings.agreement.audit_seed,
        min_mean=ws.settings.review.audio_min_mean,
    )
    return {PER_LEAF: per_leaf, MATRIX: matrix}


def write_leaf_agreement(writer: ReleaseWriter, report: dict[str, Any] | None) -> None:
    for path, document in (report or {}).items():
        writer.write_json(path, document)


def _kappa(result: dict[str, Any]) -> str:
    value = result.get("value")
    return f"{value:.2f}" if isinstance(value, int | float) else "–"


def card_lines(report: dict[str, Any] | None) -> list[str]:
    """The card's section: the subset, then one table row per leaf with its three kappas and disagreements."""
    if not report:
        return []
    per_leaf, matrix = report[PER_LEAF], report[MATRIX]
    subset = per_leaf["audit_subset"]
    drawn = "all released items" if subset["all_items"] else f"{subset['items']} items drawn with seed {subset['seed']}"
    out = [
        "### Agreement per taxonomy leaf (audit subset)",
        "",
        f"On the audit subset ({drawn}, stratified by perturbed modality; TRIAD App. C.3). Reported, not a gate. "
        f"Figures in `{PER_LEAF}`; the coders' value-by-value counts in `{MATRIX}`.",
        "",
        "| modality | leaf | items | answer κ | tier-tag κ | naturalness κ | disagreements (answer / tier / natural) |",
        "|---|---|---|---|---|---|---|",
    ]
    labels = matrix["labels"]
    for modality, leaves in per_leaf["per_leaf"].items():
        for leaf, figures in leaves.items():
            disagreements = " / ".join(
                f"{c['disagreements']} of {c['pairs']}"
                for c in (
                    labels[label]["per_leaf"][modality][leaf] for label in ("answer_check", "tier_tag", "naturalness")
                )
            )
            out.append(
                f"| {modality} | {leaf} | {figures['items']} | {_kappa(figures['answer_check'])} | "
                f"{_kappa(figures['tier_tag'])} | {_kappa(figures['naturalness'])} | {disagreements} |"
            )
    return [*out, ""]


def croissant_files(entries: Sequence[FileEntry]) -> list[dict[str, Any]]:
    """Croissant FileObjects for the two files (when the release has them)."""
    return [
        {
            "@type": "cr:FileObject",
            "@id": entry.path,
            "name": entry.path,
            "description": FILES[entry.path],
            "contentUrl": entry.path,
            "contentSize": f"{entry.size} B",
            "encodingFormat": "application/json",
            "sha256": entry.sha256,
        }
        for entry in entries
        if entry.path in FILES
    ]
