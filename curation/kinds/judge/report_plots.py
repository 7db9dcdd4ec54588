"""PNG figures of the judge report (`curate judge report --plots DIR`): the rubric-versus-overall correlation
maps of people and judges side by side (Fig. 5), and each source's first / second / tie rates (Table 6).

matplotlib is imported here only, with the non-interactive Agg backend, as ``curation.agreement.plots`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

SHORT = {
    "overall": "OC",
    "relevance": "Rel",
    "trustworthiness": "Tru",
    "creativity": "Cre",
    "clarity": "Cla",
    "coherence": "Coh",
    "completeness": "Com",
}
"""The paper's axis labels (Fig. 5)."""


def _pyplot():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _maps(path: Path, title: str, maps: Mapping[str, Mapping[str, Any]]) -> Path:
    plt = _pyplot()
    names = list(maps)
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names) + 1, 4.2), squeeze=False)
    image = None
    for ax, name in zip(axes[0], names, strict=True):
        labels = [SHORT.get(c, c) for c in maps[name]["criteria"]]
        matrix = [[float("nan") if v is None else v for v in row] for row in maps[name]["pearson"]]
        image = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
        ax.set_yticks(range(len(labels)), labels)
        ax.set_title(name, fontsize=9)
        for i, row in enumerate(matrix):
            for j, value in enumerate(row):
                text = "—" if value != value else f"{value:.2f}"
                ax.text(
                    j, i, text, ha="center", va="center", fontsize=7, color="white" if abs(value) > 0.6 else "black"
                )
    fig.suptitle(title)
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="Pearson r")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _rates(path: Path, rates: Mapping[str, Mapping[str, Any]]) -> Path:
    plt = _pyplot()
    names = [n for n in rates if "overall" in rates[n]["all"]]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(names) + 2), 4))
    bottom = [0.0] * len(names)
    for choice, colour in (("first", "#4c72b0"), ("tie", "#bbbbbb"), ("second", "#dd8452")):
        heights = [rates[n]["all"]["overall"][choice] or 0.0 for n in names]
        ax.bar(names, heights, bottom=bottom, label=choice, color=colour)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_ylabel("share of pair samples (overall choice)")
    ax.set_ylim(0, 1)
    ax.set_title("First / tie / second choice rates")
    ax.legend(loc="upper right", fontsize=8)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_report_plots(report: Mapping[str, Any], directory: Path) -> list[Path]:
    """Write the report's figures into ``directory``; returns the files written (none without samples)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for kind, title in (("pairs", "Pair choices: rubric vs overall"), ("scores", "Scores: rubric vs overall")):
        maps = report.get(kind, {}).get("correlation_maps")
        if maps:
            written.append(_maps(directory / f"{kind}_rubric_correlation.png", title, maps))
    rates = report.get("pairs", {}).get("choice_rates")
    if rates and any("overall" in r["all"] for r in rates.values()):
        written.append(_rates(directory / "pair_choice_rates.png", rates))
    return written
