"""The human baseline in a release (TRIAD §5.1, Table 7: the subset "is reported separately in the release metadata").

Per campaign, ``baseline/<campaign>/subset.jsonl`` lists the subset (item, group, stratum, whether the item is in
this release, how many raters answered each form) and ``baseline/<campaign>/report.json`` holds the figures as
``curate baseline report --json`` gives them, raters numbered instead of named. Nothing is written for a
workspace without a campaign. :func:`card_lines` is the dataset card's section: the human rows on the subset,
apart from the benchmark's own figures.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from curation.baseline.campaign import answers_of, campaigns
from curation.baseline.report import baseline_report
from curation.baseline.sampling import PoolItem, leaf_of, stratum_key
from curation.tables import Item, SceneGroup
from curation.workspace import Workspace

from .writer import ReleaseWriter


def _subset_lines(ws: Workspace, name: str, items: list[str], released: Collection[str]) -> list[dict[str, Any]]:
    with ws.session() as s:
        answered: dict[tuple[str, str], int] = {}
        for a in answers_of(s, name):
            answered[(a.item_id, a.form)] = answered.get((a.item_id, a.form), 0) + 1
        lines = []
        for item_id in items:
            row = s.get(Item, item_id)
            if row is None:
                continue
            group = s.get(SceneGroup, row.group_id)
            leaf = leaf_of(row.taxonomy, group.perturbed if group else "")
            lines.append(
                {
                    "item": item_id,
                    "group": row.group_id,
                    "stratum": stratum_key(PoolItem(row.id, row.group_id, row.language, len(row.ambiguous), leaf)),
                    "in_release": item_id in released,
                    "answers": {
                        "open_ended": answered.get((item_id, "open"), 0),
                        "standard": answered.get((item_id, "standard"), 0),
                    },
                }
            )
    return lines


def write_baseline(writer: ReleaseWriter, ws: Workspace, released: Collection[str]) -> dict[str, dict[str, Any]]:
    """Write every campaign's subset and report; the reports by campaign (for the card)."""
    settings = ws.settings.baseline
    reports: dict[str, dict[str, Any]] = {}
    for campaign in campaigns(ws):
        report = baseline_report(ws, campaign.name, settings.bootstrap, settings.seed, settings.confidence)
        report["by_rater"] = {f"rater-{n}": v for n, v in enumerate(report["by_rater"].values(), start=1)}
        lines = _subset_lines(ws, campaign.name, list(campaign.items), released)
        body = "".join(_json_line(line) for line in lines)
        writer.write_bytes(f"baseline/{campaign.name}/subset.jsonl", body.encode("utf-8"))
        writer.write_json(f"baseline/{campaign.name}/report.json", report)
        reports[campaign.name] = report
    return reports


def _json_line(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n"


def _percent(figure: dict[str, Any]) -> str:
    value = figure.get("value")
    return "–" if value is None else f"{100 * value:.1f}"


def card_lines(reports: dict[str, dict[str, Any]]) -> list[str]:
    """The card's section on the human baseline; none without a campaign."""
    out: list[str] = []
    for name, report in sorted(reports.items()):
        human, random = report["human"], report["random"]
        out += [
            f"### Human baseline `{name}`",
            "",
            f"{report['items']} items in {report['groups']} scene groups, drawn with seed {report['seed']} and "
            f"stratified by language, ambiguity tier and modality leaf; {report['raters_per_item']} raters per item "
            "who neither wrote nor reviewed it. Human rows are on this subset, not the whole benchmark (TRIAD §5.1); "
            f"the subset is `baseline/{name}/subset.jsonl`, the figures `baseline/{name}/report.json`.",
            "",
            "| row | Acc_q | Acc_g |",
            "|---|---|---|",
            f"| Human, Standard | {_percent(human['standard']['acc_q'])} | {_percent(human['standard']['acc_g'])} |",
            f"| Human, open-ended | {_percent(human['open_ended']['acc_q'])} | {_percent(human['open_ended']['acc_g'])} |",
            f"| Random (subset) | {100 * random['subset']['acc_q']:.1f} | {100 * random['subset']['acc_g']:.1f} |",
            "",
        ]
    return out
