"""``curate adjudicate``: the checklist adjudication queue, and a maintainer's consensus checklist."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import JsonFlag, cli_path, err_console, open_workspace, out_console, print_json


def adjudicate_cmd(
    item: Annotated[str | None, typer.Argument(help="Item to settle; leave out to list the queue.")] = None,
    checklist: Annotated[
        Path | None,
        typer.Option(help='The consensus: a JSON file of view -> option keys ({"text": ["A", "B"], ...}).'),
    ] = None,
    from_reviewer: Annotated[
        str | None, typer.Option("--from", help="Take this reviewer's checklist as the consensus.")
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="The maintainer recording the consensus.")] = None,
    reason: Annotated[str | None, typer.Option(help="Why this is the consensus (required; kept).")] = None,
    revision: Annotated[
        int | None,
        typer.Option(
            help="The item's revision you looked at (the queue lists it): refused (stale:adjudication) if the "
            "item changed since."
        ),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """List items whose subset-checklist reviewers disagree, or record a maintainer's consensus checklist.

    An item whose verdict depends on the combination rule is held (checklist:disagreement) until then.
    """
    from curation.adjudication import adjudication_queue, read_consensus, record_adjudication
    from curation.errors import Problem, ValidationFailed

    ws = open_workspace()
    if item is None:
        if checklist or from_reviewer or by or reason or revision is not None:
            raise ValidationFailed([Problem("name the ITEM to adjudicate", "item")])
        queue = adjudication_queue(ws)
        if json_out:
            print_json([d.as_dict() for d in queue])
            return
        for d in queue:
            verdicts = "; ".join(f"{rule}: {', '.join(r) or 'well_posed'}" for rule, r in d.verdicts.items())
            out_console.print(
                f"{d.item}  revision {d.revision}  {'HELD checklist:disagreement' if d.held else 'listed'}  "
                f"({verdicts})",
                highlight=False,
                markup=False,
            )
        err_console.print(
            f"{len(queue)} item(s) to adjudicate, {sum(d.held for d in queue)} held"
            if queue
            else "nothing to adjudicate"
        )
        return
    missing = [Problem(f"--{name} is required", name) for name, value in (("by", by), ("reason", reason)) if not value]
    if missing:
        raise ValidationFailed(missing, "nothing was recorded")
    if checklist is not None:
        cli_path(checklist, "--checklist", file=True)  # a missing file, a folder, a FIFO: named before anything
    consistent = read_consensus(checklist) if checklist is not None else None
    assert by is not None and reason is not None
    done = record_adjudication(ws, item, by, reason, consistent, from_reviewer, revision)
    if json_out:
        print_json(done.as_dict())
        return
    verdict = "passes" if not done.reasons else f"fails ({', '.join(done.reasons)})"
    out_console.print(
        f"{item}: consensus recorded; the checklist {verdict}; the item is {done.state}", highlight=False, markup=False
    )


def register(app: typer.Typer) -> None:
    app.command("adjudicate")(adjudicate_cmd)
