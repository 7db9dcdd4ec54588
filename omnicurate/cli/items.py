"""``curate import|export|review|decide``: moving items and reviews in and out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from .common import JsonFlag, err_console, open_workspace, out_console, print_json

import_app = typer.Typer(help="Import items or review records from JSONL (all or nothing).", no_args_is_help=True)
export_app = typer.Typer(help="Export items as JSONL with their media.", no_args_is_help=True)
review_app = typer.Typer(help="Review queues.", no_args_is_help=True)


class MediaProgress:
    """Progress of a long import's media reading on stderr: a bar on a terminal, else a line per tenth."""

    SHOWN_FROM = 200
    """Fewer media files than this read too fast for progress to say anything."""

    def __init__(self, label: str = "reading media", done: str = "read (hashed, copied, decoded)") -> None:
        self.label = label
        self.done = done
        self.bar: Any = None
        self.task: Any = None
        self.tenths = 0

    def __enter__(self) -> MediaProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, done: int, total: int) -> None:
        if total < self.SHOWN_FROM:
            return
        if not err_console.is_terminal:
            tenths = done * 10 // total
            if tenths > self.tenths:
                self.tenths = tenths
                err_console.print(f"media: {done}/{total} files {self.done}", highlight=False)
            return
        if self.bar is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn(self.label),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err_console,
                transient=True,
            )
            self.task = self.bar.add_task("media", total=total)
            self.bar.start()
        self.bar.update(self.task, completed=done)


@import_app.command("items")
def import_items_cmd(
    file: Annotated[Path, typer.Argument(help="Items JSONL; media paths are relative to its folder.")],
    actor: Annotated[str, typer.Option(help="Who is importing (recorded in the event log).")] = "cli",
    json_out: JsonFlag = False,
) -> None:
    """Validate every line, then import all items in one transaction (re-importing changes nothing)."""
    from curation.items import import_items

    ws = open_workspace()
    with MediaProgress() as progress:
        report = import_items(ws, file, actor=actor, progress=progress)
    if report.measuring_deferred and report.new_media:
        from curation.audit.measuring import start_in_background

        pid = start_in_background(ws)
        if pid is not None:
            err_console.print(
                f"measuring the new media's facts and signatures in the background (process {pid}); the media "
                "gate, the audit and `curate release build` wait for it; `curate media measure` waits and shows "
                "its progress",
                highlight=False,
                soft_wrap=True,
            )
    if json_out:
        print_json(
            {
                "created": report.created,
                "revised": report.revised,
                "unchanged": report.unchanged,
                "new_media": report.new_media,
            }
        )
    else:
        out_console.print(report.summary())


@import_app.command("reviews")
def import_reviews_cmd(
    file: Annotated[
        Path, typer.Argument(help="Review records JSONL (format: docs/reference/formats.md), any stage, any order.")
    ],
    json_out: JsonFlag = False,
) -> None:
    """Validate every record, then store them all in one transaction."""
    from curation.reviews import import_reviews

    report = import_reviews(open_workspace(), file)
    if json_out:
        print_json({"recorded": report.recorded, "replaced": report.replaced, "unchanged": report.unchanged})
    else:
        out_console.print(report.summary())


@export_app.command("items")
def export_items_cmd(
    file: Annotated[
        Path,
        typer.Argument(
            help="FILE.jsonl, or a folder (created when missing) to write items.jsonl into; media go beside it."
        ),
    ],
    media_dir: Annotated[str, typer.Option(help="Name of the media folder beside FILE.")] = "media",
    by: Annotated[
        str | None,
        typer.Option("--by", help="The person who will read the export: recorded as shown every item's label."),
    ] = None,
) -> None:
    """Export every item; importing the file into a new workspace gives the same items.

    The file holds every label: with --by PERSON that person is recorded as exposed to all of them (they can
    no longer do those items' blind checks)."""
    from curation.items import export_items

    n = export_items(open_workspace(), file, media_dir, reader=by)
    err_console.print(f"exported {n} item(s) to {file}", highlight=False, markup=False, soft_wrap=True)


@review_app.command("queue")
def queue_cmd(
    stage: Annotated[
        str,
        typer.Argument(help="A review stage of any kind (`curate kinds` lists them), e.g. grammar or answer_check."),
    ],
    reviewer: Annotated[str, typer.Option(help="The reviewer whose queue to show.")],
    limit: Annotated[int, typer.Option(help="Show at most this many (0: all).")] = 0,
    why: Annotated[
        bool,
        typer.Option(
            "--why",
            help="Also list what waits at STAGE that this person is not offered (language, qualification, or a "
            "later stage nobody else could staff), and why.",
        ),
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """What this person may review next at STAGE (never their own items), with who holds each entry now (a
    page that offers an entry reserves it for a lease)."""
    from curation.kinds import GroupStage, stage_named
    from curation.reservations import holders
    from curation.review_queues import queue_report

    ws = open_workspace()
    report = queue_report(ws, stage, reviewer)
    offered = report.offered[:limit] if limit else report.offered
    prefix = "group:" if isinstance(stage_named(stage), GroupStage) else "item:"
    held = holders(ws, stage)
    key = "group" if prefix == "group:" else "id"
    if json_out:
        rows: list[dict[str, object]] = [
            {key: x, "stage": stage, "reserved_by": sorted(held.get(prefix + x, ()))} for x in offered
        ]
        if why:
            rows += [{key: x, "stage": stage, "withheld": reason} for x, reason in report.withheld.items()]
        print_json(rows)
        return
    for x in offered:
        by = sorted(held.get(prefix + x, ()))
        out_console.print(x + (f"\treserved by {', '.join(by)}" if by else ""))
    err_console.print(f"{len(report.offered)} waiting for {reviewer} at {stage}")
    if why:
        for x, reason in report.withheld.items():
            err_console.print(f"not offered: {x}: {reason}")
    elif report.withheld:
        err_console.print(f"{len(report.withheld)} more not offered to {reviewer} (--why says why)")


def decide_cmd(
    item: Annotated[str, typer.Argument(help="Item id.")],
    action: Annotated[str, typer.Argument(help="discard, restore or override.")],
    by: Annotated[str, typer.Option("--by", help="The maintainer deciding.")],
    reason: Annotated[str, typer.Option(help="Written reason (required; kept in the event log).")],
    stage: Annotated[str | None, typer.Option(help="Stage whose verdict to override.")] = None,
    verdict: Annotated[str | None, typer.Option(help="pass or fail (override only).")] = None,
) -> None:
    """A maintainer discards or restores an item, or overrides one stage's verdict."""
    from curation.decisions import decide
    from curation.errors import Problem, ValidationFailed

    if action not in ("discard", "restore", "override"):
        raise ValidationFailed([Problem(f"unknown action {action!r}; use discard, restore or override", "action")])
    decide(open_workspace(), item, by, action, reason, stage, verdict)
    out_console.print(f"{item}: {action} recorded")


def history_cmd(
    item: Annotated[str, typer.Argument(help="Item id.")],
    by: Annotated[
        str | None, typer.Option("--by", help="The person reading it: recorded as shown the item's label.")
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Every event of an item and its group: who, when, what, before and after (the label among them)."""
    from curation.decisions import history
    from curation.exposure import reveal

    ws = open_workspace()
    events = history(ws, item)
    if by is not None:
        ws.person(by)
        reveal(ws, by, [item], "curate history")
    if json_out:
        print_json(
            [
                {
                    "at": e.at.isoformat(),
                    "actor": e.actor,
                    "action": e.action,
                    "subject": e.subject,
                    "before": e.before,
                    "after": e.after,
                }
                for e in events
            ]
        )
        return
    table = Table("at", "actor", "action", "subject", "change")
    for e in events:
        change = ", ".join(f"{k}={v}" for k, v in (e.after or {}).items())
        table.add_row(e.at.strftime("%Y-%m-%d %H:%M:%S"), e.actor, e.action, e.subject, change[:100])
    out_console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
    app.add_typer(export_app, name="export")
    app.add_typer(review_app, name="review")
    app.command("decide")(decide_cmd)
    app.command("history")(history_cmd)
