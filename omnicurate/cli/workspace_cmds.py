"""``curate init|status|funnel|demo``: creating a workspace and seeing where items stand."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from curation.vocab import STATES

from .common import JsonFlag, err_console, fail, open_workspace, out_console, print_json


def init_cmd(
    directory: Annotated[Path, typer.Argument(help="Folder to create (or upgrade in place).")],
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database URL, e.g. postgresql+psycopg://user@127.0.0.1/curate (default: SQLite in the folder).",
        ),
    ] = None,
) -> None:
    """Create a workspace: curate.toml, a database, a content-addressed media store and release-claims.toml (a
    template that claims nothing: what releases state in the maintainer's words)."""
    from curation.workspace import Workspace

    ws = Workspace.init(directory, db)
    out_console.print(f"workspace ready at {ws.root} ({ws.engine.dialect.name})")


def status_cmd(
    json_out: JsonFlag = False,
    state: Annotated[str | None, typer.Option(help=f"Show only items in this state: {', '.join(STATES)}.")] = None,
) -> None:
    """Per item: group, state, next stage and reasons.

    A group whose items, records, decisions and settings did not change since the last run keeps the
    statuses derived then (.cache/statuses.json in the workspace; deleting it only costs time)."""
    from curation.workflow import collector_paused

    if state is not None and state not in STATES:
        raise fail(f"unknown state {state!r} for --state; the states are {', '.join(STATES)}")
    ws = open_workspace()
    # Bulk work that makes no cycles: what the derivation read is freed (by reference counting) when
    # _statuses returns, before the collector resumes and would scan every object it made.
    with collector_paused():
        statuses, staffing = _statuses(ws, state)
    ws.close()  # before the output: the command ends without the interpreter's teardown (``main.run``)
    if json_out:
        print_json([st.as_json() for st in statuses])
        return
    print_status_table(statuses)
    print_staffing(staffing)


def _statuses(ws, state: str | None) -> tuple[list, list[dict[str, object]]]:  # type: ignore[no-untyped-def]
    """Every status (in the given state), and the staffing summary."""
    from curation.kinds import kind_statuses
    from curation.staffing import summary
    from curation.status_memo import memoized_statuses

    statuses, staffing = memoized_statuses(ws)
    statuses += kind_statuses(ws)  # e.g. judge tasks, which live apart from the item table
    if state:
        statuses = [st for st in statuses if st.state == state]
    return statuses, summary(staffing)


def print_staffing(rows: list[dict[str, object]]) -> None:
    """One line per stage the workspace's reviewers cannot staff, with the smallest change that fixes it."""
    from curation.staffing import describe

    for row in rows:
        err_console.print(describe(row), style="yellow", highlight=False, markup=False)


def print_status_table(statuses) -> None:  # type: ignore[no-untyped-def]
    table = Table("item", "group", "state", "stage")
    table.add_column("reasons", overflow="fold", min_width=18)
    colours = {"admitted": "green", "returned": "red", "held": "yellow", "in_review": "cyan", "discarded": "dim"}
    between = "\n" if out_console.is_terminal else ","  # one reason per line on a screen; a list in TSV
    for st in statuses:
        table.add_row(st.id, st.group, f"[{colours[st.state]}]{st.state}[/]", st.stage or "", between.join(st.reasons))
    out_console.print(table)
    counts = Counter(st.state for st in statuses)
    err_console.print(", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "no items")


def funnel_cmd(json_out: JsonFlag = False) -> None:
    """The screening steps (candidates each step kept, and why it dropped the rest), then counts per review
    stage and state, the admission rate and the most common reasons."""
    from curation.kinds import kind_statuses
    from curation.screening.pipeline import stored_funnel
    from curation.staffing import summary
    from curation.status_memo import memoized_statuses
    from curation.workflow import funnel

    from .screen import print_screen_funnel

    ws = open_workspace()
    statuses, staffing = memoized_statuses(ws)
    report = funnel(statuses + kind_statuses(ws))
    report["staffing"] = summary(staffing)
    screening = stored_funnel(ws, ws.settings.screen)
    ws.close()  # before the output: the command ends without the interpreter's teardown (``main.run``)
    report["screening"] = screening.to_json()
    if json_out:
        print_json(report)
        return
    if screening.candidates:
        print_screen_funnel(screening)
    table = Table("stage", "in_review", "returned")
    for stage, counts in report["stages"].items():
        table.add_row(stage, str(counts.get("in_review", 0)), str(counts.get("returned", 0)))
    out_console.print(table)
    out_console.print(", ".join(f"{n} {s}" for s, n in report["states"].items()))
    rate = report["admission_rate"]
    out_console.print(f"admission rate: {rate:.1%}" if rate is not None else "admission rate: no items")
    for row in report["reasons"][:10]:
        out_console.print(f"  {row['count']:>4}  {row['reason']}")
    print_staffing(report["staffing"])


def demo_cmd(
    directory: Annotated[Path, typer.Argument(help="Folder for the demo workspace.")] = Path("demo-workspace"),
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="mcq (TRIAD items, the default), story (Omni-StoryBench transitions) or judge (Judge Anything tasks).",
        ),
    ] = "mcq",
) -> None:
    """Build a demo workspace from the bundled demo data and run the pipeline on it."""
    log = lambda msg: err_console.print(msg, highlight=False, soft_wrap=True)  # noqa: E731
    if kind == "story":
        from omnicurate.demo.story import build_story_demo

        build_story_demo(directory, log=log)
        return
    if kind == "judge":
        from omnicurate.demo.judge import build_judge_demo

        from .judge import full_report, print_report

        print_report(full_report(build_judge_demo(directory, log=log)))
        return
    if kind != "mcq":
        raise fail(f"unknown demo kind {kind!r}; use mcq, story or judge")
    from omnicurate.demo import build_demo

    build_demo(directory, log=log, show_status=print_status_table)


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
    app.command("status")(status_cmd)
    app.command("funnel")(funnel_cmd)
    app.command("demo")(demo_cmd)
