"""PNG figures of an agreement report: disagreement heatmaps and per-leaf / per-view agreement bars.

matplotlib is imported here only, with the non-interactive Agg backend, so nothing else pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _pyplot():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _heatmap(
    path: Path, title: str, labels: Sequence[str], matrix: Sequence[Sequence[float]], xlabel: str, ylabel: str
) -> Path:
    plt = _pyplot()
    size = max(4.0, 0.6 * len(labels) + 2)
    fig, ax = plt.subplots(figsize=(size + 1, size))
    image = ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    peak = max((v for row in matrix for v in row), default=0) or 1
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            if value:
                ax.text(
                    j,
                    i,
                    f"{value:g}",
                    ha="center",
                    va="center",
                    color="white" if value > peak / 2 else "black",
                    fontsize=8,
                )
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _bars(
    path: Path, title: str, values: Mapping[str, float | None], ylabel: str, threshold: float | None = None
) -> Path:
    plt = _pyplot()
    names = list(values)
    heights = [values[n] if values[n] is not None else 0.0 for n in names]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.7 * len(names) + 2), 4))
    bars = ax.bar(range(len(names)), heights, color=["#4c72b0" if values[n] is not None else "#cccccc" for n in names])
    for bar, name in zip(bars, names, strict=True):
        label = "n/a" if values[name] is None else f"{values[name]:.3f}"
        ax.annotate(
            label, (bar.get_x() + bar.get_width() / 2, max(bar.get_height(), 0)), ha="center", va="bottom", fontsize=8
        )
    if threshold is not None:
        ax.axhline(threshold, color="#c44e52", linestyle="--", label=f"gate {threshold:.3f}")
        ax.legend(loc="lower right")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylim(min([0.0, *(h for h in heights if h is not None)]) - 0.05, 1.1)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_plots(report: Mapping[str, Any], directory: Path, gates: Mapping[str, float] | None = None) -> list[Path]:
    """Write the report's figures as PNG files into ``directory``; returns the files written."""
    gates = gates or {}
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    confusion = report["answer_check"]["confusion"]
    if confusion["labels"]:
        written.append(
            _heatmap(
                directory / "answer_confusion.png",
                "Author's label vs blind answer",
                confusion["labels"],
                confusion["counts"],
                "blind answer",
                "label",
            )
        )
    views = report["subset_checklist"]["views"]
    written.append(
        _bars(
            directory / "checklist_alpha_by_view.png",
            "Subset checklist: alpha per view",
            {v: r["value"] for v, r in views.items()},
            "Krippendorff's alpha (nominal)",
            gates.get("checklist_alpha_min"),
        )
    )
    audio = report["audio_signoff"]
    written.append(
        _bars(
            directory / "audio_alpha_by_axis.png",
            "Audio sign-off: alpha per axis",
            {a: r["value"] for a, r in audio.items()},
            "Krippendorff's alpha (ordinal)",
            gates.get("audio_alpha_min"),
        )
    )
    per_leaf: dict[str, float | None] = {}
    for modality, part in report["taxonomy"].items():
        if not part["items"]:
            continue
        written.append(
            _heatmap(
                directory / f"taxonomy_{modality}_disagreement.png",
                f"Taxonomy ({modality}): leaf coincidences",
                part["leaves"],
                part["disagreement"],
                "leaf",
                "leaf",
            )
        )
        per_leaf.update({f"{modality}:{leaf}": part["per_leaf"].get(leaf) for leaf in part["leaves"]})
    if per_leaf:
        written.append(
            _bars(
                directory / "taxonomy_leaf_agreement.png",
                "Taxonomy: agreement per leaf",
                per_leaf,
                "specific agreement",
            )
        )
    return written
