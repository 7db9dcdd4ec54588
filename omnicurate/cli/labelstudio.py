"""``curate ls ...`` and ``curate campaign ...``: review stages and rating campaigns on a Label Studio server.

The bridge lives in ``annotation_ui.labelstudio`` (extra ``labelstudio``); it is imported only when a
command runs, so ``curate --help`` stays fast and works without the SDK installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .common import JsonFlag, err_console, for_people, open_workspace, out_console, print_json

if TYPE_CHECKING:
    from annotation_ui.labelstudio.projects import PushReport

app = typer.Typer(
    help="Label Studio: push review stages as projects, pull annotations back as review records.",
    no_args_is_help=True,
)
campaign_app = typer.Typer(
    help="Rating campaigns over model outputs, served through Label Studio (score or pairwise A/B/tie).",
    no_args_is_help=True,
)

RecreateFlag = Annotated[
    bool,
    typer.Option("--recreate", help="Start a new project when the old one was deleted on the server (or moved)."),
]


def _connection(ws):  # type: ignore[no-untyped-def]
    try:
        from annotation_ui.labelstudio.connection import Connection
    except ModuleNotFoundError as exc:  # label_studio_sdk missing
        from curation.errors import CurateError

        raise CurateError(f"the Label Studio bridge needs {exc.name}: pip install 'omnicurate[labelstudio]'") from exc
    return Connection.resolve(ws.settings.labelstudio)


def _print_push(report: PushReport, about: dict[str, str], label: str, json_out: bool) -> None:
    """A push report: ``about`` (what was pushed) leads the JSON document, ``label`` the summary line."""
    if json_out:
        print_json({**about, **report.as_json()})
    else:
        out_console.print(f"{label}: {report.summary()}", highlight=False)


def _print_refusal(annotation: int, task: int, about: str, reason: str) -> None:
    err_console.print(
        f"refused: annotation {annotation} (task {task}, {about}): {reason}", highlight=False, markup=False
    )


@app.command("status")
def status_cmd(json_out: JsonFlag = False) -> None:
    """Check the connection settings: the server answers, accepts the token, and the document root is writable."""
    from annotation_ui.labelstudio.connection import status

    info = status(_connection(open_workspace()))
    if json_out:
        print_json(info)
        return
    out_console.print(
        f"Label Studio {info['version']} at {info['url']}: signed in as {info['user']['email']} "
        f"(user {info['user']['id']}); media are published to {info['media']}",
        highlight=False,
    )


@app.command("push")
def push_cmd(
    stage: Annotated[
        str,
        typer.Argument(
            help="A review stage of any kind (`curate kinds` lists them), e.g. grammar or answer_check, "
            "or query_screen (the judge kind's query screening and refinement)."
        ),
    ],
    recreate: RecreateFlag = False,
    json_out: JsonFlag = False,
) -> None:
    """Create or update STAGE's project and import its pending items as tasks (pushing again adds nothing)."""
    from annotation_ui.labelstudio.engine import push
    from annotation_ui.labelstudio.registry import review_project

    ws = open_workspace()
    _print_push(push(ws, _connection(ws), review_project(ws, stage), recreate), {"stage": stage}, stage, json_out)


@app.command("pull")
def pull_cmd(
    stage: Annotated[str | None, typer.Argument(help="The stage to pull (default: every pushed stage).")] = None,
    strict: Annotated[bool, typer.Option(help="Exit with code 1 when an annotation was refused.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Validate every annotation and record the acceptable ones as review records (pulling twice adds nothing)."""
    from annotation_ui.labelstudio.engine import pull
    from annotation_ui.labelstudio.registry import pushed_reviews, review_project

    ws = open_workspace()
    stages = [stage] if stage else pushed_reviews(ws)
    if not stages:
        err_console.print("nothing to pull: no stage was pushed from this workspace (curate ls push STAGE)")
        raise typer.Exit(2)
    reports = pull(ws, _connection(ws), [review_project(ws, name) for name in stages])
    if json_out:
        print_json([r.as_json() for r in reports])
    else:
        for r in reports:
            out_console.print(r.summary(), highlight=False)
            for refusal in r.refused:
                _print_refusal(refusal.annotation, refusal.task, f"{refusal.subject}, {refusal.user}", refusal.reason)
    if strict and any(r.refused for r in reports):
        raise typer.Exit(1)


@campaign_app.command("create")
def campaign_create_cmd(
    name: Annotated[str, typer.Argument(help="Campaign name (letters, digits, '.', '_', '-').")],
    outputs: Annotated[
        Path,
        typer.Option(help="JSONL of outputs: system, item, text / image / audio (paths relative to the file), prompt."),
    ],
    kind: Annotated[str, typer.Option(help="rating (criteria on 1..N) or pairwise (A, B or tie).")] = "rating",
    preset: Annotated[
        str, typer.Option(help="storybench: Omni-StoryBench's four criteria on 1-10; judge-anything: one score on 1-5.")
    ] = "storybench",
    criterion: Annotated[
        list[str] | None, typer.Option("--criterion", help="A criterion instead of the preset's (repeat).")
    ] = None,
    scale: Annotated[int | None, typer.Option(help="Top of the rating scale, 2-10 (default: the preset's).")] = None,
    redundancy: Annotated[int, typer.Option(help="Target number of ratings per unit.")] = 2,
    seed: Annotated[int, typer.Option(help="Seed of the pairwise side draws and of the report's bootstraps.")] = 0,
    actor: Annotated[str, typer.Option(help="Who creates it (recorded in the event log).")] = "cli",
    json_out: JsonFlag = False,
) -> None:
    """Create a rating campaign from model outputs (validated whole; nothing is stored on a problem)."""
    from annotation_ui.labelstudio.campaigns import campaign_spec, create_campaign

    spec = campaign_spec(name, kind, preset, criterion, scale, redundancy, seed)
    summary = create_campaign(open_workspace(), spec, outputs, actor)
    if json_out:
        print_json(summary)
    else:
        out_console.print(
            f"campaign {name}: {summary['outputs']} output(s), {summary['units']} unit(s) to rate "
            f"({kind}; {', '.join(summary['criteria'])}; target {redundancy} rating(s) per unit)",
            highlight=False,
        )


@campaign_app.command("push")
def campaign_push_cmd(
    name: Annotated[str, typer.Argument(help="Campaign name.")],
    recreate: RecreateFlag = False,
    json_out: JsonFlag = False,
) -> None:
    """Create or update the campaign's project: one task per unit, overlap = the redundancy target."""
    from annotation_ui.labelstudio.campaigns import push_campaign

    ws = open_workspace()
    _print_push(push_campaign(ws, _connection(ws), name, recreate), {"campaign": name}, f"campaign {name}", json_out)


@campaign_app.command("pull")
def campaign_pull_cmd(
    name: Annotated[str, typer.Argument(help="Campaign name.")],
    strict: Annotated[bool, typer.Option(help="Exit with code 1 when an annotation was refused.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Validate and store every rater's latest evaluation per unit (skips as skips); pulling twice adds nothing."""
    from annotation_ui.labelstudio.campaigns import pull_campaign

    ws = open_workspace()
    report = pull_campaign(ws, _connection(ws), name)
    if json_out:
        print_json(report.as_json())
    else:
        out_console.print(report.summary(), highlight=False)
        for refusal in report.refused:
            _print_refusal(
                refusal["annotation"], refusal["task"], f"unit {refusal['unit']}, {refusal['user']}", refusal["reason"]
            )
    if strict and report.refused:
        raise typer.Exit(1)


@campaign_app.command("report")
def campaign_report_cmd(
    name: Annotated[str, typer.Argument(help="Campaign name.")],
    judges: Annotated[
        Path | None,
        typer.Option(
            help="JSONL of judge verdicts: {judge, item, system, scores} (rating) or {judge, item, a, b, winner} (pairwise)."
        ),
    ] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples for the system means' 95% intervals.")] = 2000,
    json_out: JsonFlag = False,
) -> None:
    """Coverage, ordinal Krippendorff alpha per criterion, system means with intervals, Elo, judge-human agreement."""
    from annotation_ui.labelstudio.report import campaign_report

    report = campaign_report(open_workspace(), name, judges, resamples)
    if json_out:
        print_json(report)
        return
    _print_report(report)


def _print_report(report: dict) -> None:  # type: ignore[type-arg]
    from rich.table import Table

    cov = report["coverage"]
    out_console.print(
        f"campaign {report['campaign']} ({report['kind']}): {cov['evaluations']} evaluation(s) of {cov['units']} "
        f"unit(s) by {cov['raters']} rater(s); {cov['units_at_target']} unit(s) at the target of {cov['target']}; "
        f"{cov['skips']} skip(s); ratings per unit: "
        + (", ".join(f"{n} unit(s) with {k}" for k, n in cov["ratings_per_unit"].items()) or "none"),
        highlight=False,
    )
    agreement = Table("criterion", "alpha", "level", "units", "note")
    for criterion, stat in report["agreement"].items():
        value = "—" if stat["value"] is None else f"{stat['value']:.3f}"
        agreement.add_row(criterion, value, stat["level"], str(stat["units"]), stat["undefined"] or "")
    out_console.print(agreement)
    systems = Table("system", "n", "mean [95% CI]" if report["kind"] == "rating" else "win rate (W/L/T)", "Elo")
    for row in report["systems"]:
        elo_value = report["elo"]["ratings"].get(row["system"])
        if report["kind"] == "rating":
            o = row["overall"]
            shown = (
                "—"
                if o["mean"] is None
                else f"{o['mean']:.2f}" + (f" [{o['low']:.2f}, {o['high']:.2f}]" if o.get("low") is not None else "")
            )
            systems.add_row(row["system"], str(row["evaluations"]), shown, f"{elo_value:.0f}" if elo_value else "—")
        else:
            rate = (
                "—"
                if row["win_rate"] is None
                else f"{row['win_rate']:.2f} ({row['wins']}/{row['losses']}/{row['ties']})"
            )
            systems.add_row(row["system"], str(row["games"]), rate, f"{elo_value:.0f}" if elo_value else "—")
    out_console.print(systems)
    for judge, figures in (report.get("judges") or {}).items():
        out_console.print(f"judge {judge}: {for_people(figures)}", highlight=False, markup=False)
