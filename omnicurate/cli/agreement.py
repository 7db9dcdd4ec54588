"""``curate agreement``: agreement in the workspace's review records, its gates and adjudication queue."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .common import JsonFlag, err_console, open_workspace, print_json

app = typer.Typer(
    help="Agreement between reviewers in this workspace: report (default), gates, adjudication queue.",
    invoke_without_command=True,
)


def _figure(result: dict[str, Any]) -> str:
    if result.get("value") is None:
        reason = str(result.get("undefined") or "no reason given")
        return f"undefined: {reason.split('undefined: ', 1)[-1]}"  # the reason may say "... is undefined: why"
    return f"{result['value']:.3f}"


def _print_report(report: dict[str, Any], failures: list) -> None:  # type: ignore[type-arg]
    answer = report["answer_check"]
    overall = answer["overall"]
    raw = overall.get("raw_agreement")
    typer.echo(f"Agreement over {report['items']} items (review records valid for the current content)")
    typer.echo(
        f"blind answer vs label: kappa {_figure(overall)}" + (f", raw agreement {raw:.3f}" if raw is not None else "")
    )
    for pair in answer["pairs"]:
        typer.echo(
            f"  {pair['author']} vs {pair['reviewer']}: kappa {_figure(pair)}, "
            f"raw agreement {pair['raw_agreement']:.3f}"
        )
    typer.echo("audio sign-off, ordinal alpha per axis:")
    for axis, result in report["audio_signoff"].items():
        typer.echo(f"  {axis}: {_figure(result)}")
    checklist = report["subset_checklist"]
    typer.echo(f"subset checklist, nominal alpha over item x view x option: {_figure(checklist['all'])}")
    for view, result in checklist["views"].items():
        typer.echo(f"  {view}: {_figure(result)}")
    tagged = {m: part for m, part in report["taxonomy"].items() if part["items"]}
    if not tagged:
        typer.echo("taxonomy: no item was tagged twice (give a second tagging with --tags FILE)")
    for modality, part in tagged.items():
        typer.echo(
            f"taxonomy {modality}: alpha {_figure(part['alpha'])}, raw agreement "
            f"{part['raw_agreement']:.3f} over {part['items']} items tagged twice"
        )
        for leaf, value in part["per_leaf"].items():
            typer.echo(f"  {leaf}: {value:.3f}")
    _print_triad_labels("all items", report)
    subset = report["audit_subset"]
    where = "all items: fewer than the subset's size" if subset["all_items"] else f"seed {subset['seed']}"
    _print_triad_labels(f"audit subset of {subset['items']} ({where})", subset)
    if failures:
        for failure in failures:
            typer.echo(f"gate {failure.gate} fails: {failure.message}")
    else:
        typer.echo("agreement gates: all pass")


def _print_triad_labels(title: str, part: dict[str, Any]) -> None:
    """TRIAD C.3's labels (reported, not gates)."""
    answer = part["answer_check"].get("overall", part["answer_check"])
    checklist = part["subset_checklist"].get("all", part["subset_checklist"])
    typer.echo(
        f"TRIAD labels, {title}: answer kappa {_figure(answer)}; tier tag kappa {_figure(part['tier_tag']['overall'])}"
        f" (tier {_figure(part['tier_tag']['tier'])}); naturalness kappa {_figure(part['naturalness'])};"
        f" checklist alpha {_figure(checklist)}"
    )


@app.callback()
def report_command(
    ctx: typer.Context,
    as_json: JsonFlag = False,
    tags: Annotated[
        Path | None,
        typer.Option(
            "--tags",
            dir_okay=False,
            help='A second taxonomy tagging, JSON Lines of {"item", "tagger", "taxonomy": {...}}.',
        ),
    ] = None,
    plots: Annotated[
        Path | None,
        typer.Option("--plots", file_okay=False, help="Write PNG figures (heatmaps, per-leaf bars) to this folder."),
    ] = None,
) -> None:
    """Report agreement: blind answers vs labels, audio scores, subset checklists, taxonomy tags."""
    if ctx.invoked_subcommand is not None:
        return
    from curation.agreement.gates import active_thresholds, agreement_gate_failures
    from curation.agreement.review_agreement import load_reviewed_items, read_tags, workspace_agreement_report

    ws = open_workspace()
    items = load_reviewed_items(ws)
    report = workspace_agreement_report(ws, items, read_tags(tags, items) if tags else ())
    failures = agreement_gate_failures(items, ws.settings.agreement, report)  # judged on the report's figures
    if plots is not None:
        from curation.agreement.plots import write_plots

        for path in write_plots(report, plots, active_thresholds(ws.settings.agreement)):
            err_console.print(f"wrote {path}", highlight=False)
    if as_json:
        print_json(
            {
                **report,
                "gates": {
                    "thresholds": active_thresholds(ws.settings.agreement),
                    "failures": [f.as_dict() for f in failures],
                },
            }
        )
        return
    _print_report(report, failures)


@app.command("gates")
def gates_command(as_json: JsonFlag = False) -> None:
    """Check the [agreement] gates of curate.toml; exit 1 when one fails (a release would refuse)."""
    from curation.agreement.gates import active_thresholds, check_agreement_gates

    ws = open_workspace()
    failures = check_agreement_gates(ws)
    if as_json:
        print_json(
            {"thresholds": active_thresholds(ws.settings.agreement), "failures": [f.as_dict() for f in failures]}
        )
    else:
        for failure in failures:
            typer.echo(f"gate {failure.gate} fails: {failure.message}")
        if not failures:
            gates = ", ".join(f"{k} {v:.3f}" for k, v in active_thresholds(ws.settings.agreement).items())
            typer.echo(f"agreement gates pass ({gates or 'none active'})")
    if failures:
        raise typer.Exit(1)


@app.command("queue")
def queue_command(as_json: JsonFlag = False) -> None:
    """Items whose reviewers disagree beyond the [agreement] thresholds, for adjudication."""
    from curation.agreement.gates import adjudication_queue

    entries = adjudication_queue(open_workspace())
    if as_json:
        print_json([e.as_dict() for e in entries])
        return
    for e in entries:
        typer.echo(f"{e.item}  {e.stage}  {', '.join(e.reasons)}  (reviewers: {', '.join(e.reviewers)})")
    typer.echo(f"{len(entries)} item-stage(s) to adjudicate" if entries else "nothing to adjudicate")
    if entries:
        err_console.print(
            "settle a checklist with: curate adjudicate ITEM --from REVIEWER|--checklist FILE --by MAINTAINER "
            "--reason TEXT; any stage with: curate decide ITEM override --stage STAGE --verdict pass|fail "
            "--by MAINTAINER --reason TEXT",
            highlight=False,
            markup=False,
        )
