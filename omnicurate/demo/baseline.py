"""The demo's human baseline (TRIAD §5.1, Table 7): a campaign over every demo item, answered by the three
people who wrote and reviewed none of them (rev5, rev6, maya), from scripted answers
(``data/baseline_answers.jsonl``: a few deliberate misses), open-ended answers graded by a replayed judge
(``data/baseline_judge.jsonl``). A rerun changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
CAMPAIGN = "human-baseline"
RATERS = ("maya", "rev5", "rev6")
"""The raters the scripted answers name: the demo's three people who wrote and reviewed none of its items (named,
so that a workspace with more reviewers, as when the demos are built into one, assigns the same)."""


def baseline_demo(ws: Any, log: Callable[[str], None]) -> dict[str, Any]:
    """Create the campaign (once), import the answers, grade them, and log the report's figures."""
    from checker.baseline_grading import grade_with_judge
    from checker.generation import open_generator
    from curation.baseline.campaign import campaigns, create_campaign
    from curation.baseline.importing import import_lines
    from curation.baseline.report import baseline_report

    settings = ws.settings.baseline
    if CAMPAIGN not in {c.name for c in campaigns(ws)}:
        create_campaign(
            ws, CAMPAIGN, size=settings.size, raters_per_item=settings.raters, seed=settings.seed, pool="all",
            raters=list(RATERS), actor="demo",
        )  # fmt: skip
    import_lines(ws, CAMPAIGN, DATA / "baseline_answers.jsonl")
    grade_with_judge(ws, CAMPAIGN, open_generator(f"replay:{DATA / 'baseline_judge.jsonl'}"))
    report = baseline_report(ws, CAMPAIGN, settings.bootstrap, settings.seed, settings.confidence)
    human, random = report["human"], report["random"]["subset"]

    def pct(figure: dict[str, Any]) -> str:
        return "–" if figure.get("value") is None else f"{100 * figure['value']:.1f}"

    log(
        f"human baseline ({report['items']} items, {report['raters_per_item']} raters each, scripted answers): "
        f"Standard Acc_q {pct(human['standard']['acc_q'])}, Acc_g {pct(human['standard']['acc_g'])}; "
        f"open-ended Acc_q {pct(human['open_ended']['acc_q'])}, Acc_g {pct(human['open_ended']['acc_g'])}; "
        f"random Acc_q {100 * random['acc_q']:.1f}, Acc_g {100 * random['acc_g']:.1f} "
        f"(curate baseline report {CAMPAIGN})"
    )
    return report
