"""``curate baseline``: the human baseline campaign (TRIAD §5.1, Table 7): create, list, import answers, grade, report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from .common import checked_backend, cli_path, err_console, fail, figure, open_workspace, out_console, print_json

app = typer.Typer(help="The human baseline: a stratified subset answered by people, reported beside random.")


@app.command("create")
def create_cmd(
    name: Annotated[str, typer.Argument(help="The campaign's name.")] = "human-baseline",
    size: Annotated[int | None, typer.Option(help="Items in the subset (default [baseline] size, 100).")] = None,
    raters: Annotated[int | None, typer.Option(help="Raters per item (default [baseline] raters, 3).")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the draw and assignment (default [baseline] seed).")] = None,
    pool: Annotated[str, typer.Option(help="admitted (the default) or all multiple-choice items.")] = "admitted",
    rater: Annotated[
        list[str] | None, typer.Option("--rater", help="A person who may rate (repeatable; default: everyone).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Draw the subset (stratified by language, tier and leaf) and assign each item to raters who did not write or review it."""
    from curation.baseline.campaign import create_campaign

    ws = open_workspace()
    settings = ws.settings.baseline
    plan = create_campaign(
        ws,
        name,
        size=size if size is not None else settings.size,
        raters_per_item=raters if raters is not None else settings.raters,
        seed=seed if seed is not None else settings.seed,
        raters=rater,
        pool=pool,
    )
    c = plan.campaign
    if json_out:
        print_json(
            {"campaign": c.name, "seed": c.seed, "items": c.items, "strata": c.strata, "raters": plan.assignments}
        )
        return
    err_console.print(
        f"campaign {c.name}: {len(c.items)} of {len(c.pool)} items in {len(c.strata)} "
        f"{'stratum' if len(c.strata) == 1 else 'strata'}, "
        f"{c.raters_per_item} rater(s) each",
        highlight=False,
        markup=False,
    )
    table = Table("item", "raters")
    for item in c.items:
        table.add_row(item, ", ".join(plan.assignments[item]))
    out_console.print(table)


@app.command("list")
def list_cmd(json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False) -> None:
    """The workspace's baseline campaigns."""
    from curation.baseline.campaign import campaigns

    rows = [
        {
            "campaign": c.name,
            "items": len(c.items),
            "pool": len(c.pool),
            "raters_per_item": c.raters_per_item,
            "seed": c.seed,
        }
        for c in campaigns(open_workspace())
    ]
    if json_out:
        print_json(rows)
        return
    table = Table("campaign", "items", "pool", "raters_per_item", "seed")
    for row in rows:
        table.add_row(*(str(v) for v in row.values()))
    out_console.print(table)


@app.command("import")
def import_cmd(
    campaign: Annotated[str, typer.Argument(help="The campaign.")],
    file: Annotated[
        Path,
        typer.Argument(help="JSONL: answers {item, rater, form, answer} or grades {item, rater, grader, correct}."),
    ],
) -> None:
    """Import answers given elsewhere (paper forms, another tool) and people's grades of open-ended answers; all or nothing."""
    from curation.baseline.importing import import_lines

    path = cli_path(file, "answers file", file=True)
    counts = import_lines(open_workspace(), campaign, path)
    err_console.print(
        f"imported {counts['answers']} answer(s) and {counts['grades']} grade(s)", highlight=False, markup=False
    )


@app.command("grade")
def grade_cmd(
    campaign: Annotated[str, typer.Argument(help="The campaign.")],
    judge: Annotated[
        str,
        typer.Option(help="Generation backend: replay:<file.jsonl>, transformers:<folder> or openai:<url>#<model>."),
    ],
) -> None:
    """Grade the open-ended answers with a judge model (stored as grader judge:<model>; people grade in the app)."""
    from checker.baseline_grading import grade_with_judge
    from checker.generation import open_generator

    counts = grade_with_judge(open_workspace(), campaign, open_generator(checked_backend(judge, "--judge")))
    err_console.print(
        f"graded {counts['correct'] + counts['incorrect']} answer(s): {counts['correct']} correct, "
        f"{counts['incorrect']} incorrect; {counts['unparseable']} unparseable verdict(s) not stored",
        highlight=False,
        markup=False,
    )


@app.command("push")
def push_cmd(
    campaign: Annotated[str, typer.Argument(help="The campaign.")] = "human-baseline",
    recreate: Annotated[
        bool, typer.Option(help="Delete and recreate the projects (annotations on them are lost).")
    ] = False,
) -> None:
    """Serve the campaign in Label Studio: an open-ended project (no options) and a Standard one."""
    from annotation_ui.labelstudio.baseline import push_baseline

    from .labelstudio import _connection

    ws = open_workspace()
    for form, report in zip(
        ("open-ended", "Standard"), push_baseline(ws, _connection(ws), campaign, recreate), strict=True
    ):
        out_console.print(f"baseline {campaign} ({form}): {report.summary()}", highlight=False)


@app.command("pull")
def pull_cmd(
    campaign: Annotated[str, typer.Argument(help="The campaign.")] = "human-baseline",
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Store the raters' Label Studio answers (open-ended first); a vote from a rater not assigned the item is refused."""
    from annotation_ui.labelstudio.baseline import pull_baseline

    from .labelstudio import _connection

    ws = open_workspace()
    reports = pull_baseline(ws, _connection(ws), campaign)
    if json_out:
        print_json([r.as_json() for r in reports])
        return
    for report in reports:
        out_console.print(report.summary(), highlight=False)


@app.command("report")
def report_cmd(
    campaign: Annotated[str, typer.Argument(help="The campaign.")] = "human-baseline",
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document (full precision).")] = False,
) -> None:
    """Human Acc_q and Acc_g (Standard and open-ended) with group-bootstrap intervals, beside the random baseline."""
    from curation.baseline.report import baseline_report

    ws = open_workspace()
    s = ws.settings.baseline
    report = baseline_report(ws, campaign, s.bootstrap, s.seed, s.confidence)
    if json_out:
        print_json(report)
        return
    err_console.print(
        f"campaign {campaign}: {report['items']} items in {report['groups']} groups; {report['note']}",
        highlight=False,
        markup=False,
    )
    table = Table("row", "Acc_q", "Acc_q CI", "Acc_g", "Acc_g CI", "scored items")
    for row, figures in (
        ("human standard", report["human"]["standard"]),
        ("human open-ended", report["human"]["open_ended"]),
    ):
        cells = []
        for key in ("acc_q", "acc_g"):
            value = figures[key].get("value")
            ci = figures[key].get("ci", {})
            cells += [
                _percent(value),
                f"{_percent(ci.get('low'))}–{_percent(ci.get('high'))}" if "low" in ci else "—",
            ]
        table.add_row(row, *cells, str(figures["scored_items"]))
    for where in ("subset", "pool"):
        r = report["random"][where]
        table.add_row(f"random ({where})", _percent(r["acc_q"]), "", _percent(r["acc_g"]), "", str(r["items"]))
    out_console.print(table)
    if report["human"]["standard"]["acc_q"].get("value") is None:
        raise fail(f"human Acc_q is undefined: {report['human']['standard']['acc_q']['undefined']}", 1)


def _percent(value: float | None) -> str:
    return "—" if value is None else figure(100 * value, 1)
