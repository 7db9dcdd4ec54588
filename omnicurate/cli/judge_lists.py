"""``curate judge checklist show TASK``: the ids people must name in judge records, listed.

A curation record selects entries by id (``"selected": ["t2t-01:relevance:3f2a…"]``); nobody can guess
them, so every refusal of an unknown entry points here."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from .common import JsonFlag, open_workspace, out_console, print_json

checklist_app = typer.Typer(help="One task's checklist entries: their ids, rubrics and texts.", no_args_is_help=True)


@checklist_app.command("show")
def show_cmd(
    task: Annotated[str, typer.Argument(help="A judge task id (`curate judge checklists` lists them).")],
    show_all: Annotated[
        bool, typer.Option("--all", help="Every drafted entry, not only the first [judge] draft_shown per rubric.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Every entry of TASK a record may name: the drafted candidates (and, once curated, the curator's edits and
    additions), with whether each is in the curated and in the final checklist. The table shows the first
    [judge] draft_shown drafted entries per rubric unless --all; --json lists all, each with "shown"."""
    from curation.kinds.judge import draft_store, record_store, task_store
    from curation.kinds.judge.checklists import shown_per_rubric

    ws = open_workspace()
    task_store.task(ws, task)  # an unknown task is refused, naming the command that lists them
    checklist = record_store.task_checklist(ws, task)
    curation = checklist.curation
    candidates = curation.candidates if curation is not None else draft_store.drafted_candidates(ws, task)
    curated = {e.id for e in curation.checklist} if curation is not None else set()
    final = {e.id for e in checklist.final}
    shown_entries, hidden = shown_per_rubric(candidates, ws.settings.judge.draft_shown)
    shown = {e.id for e in shown_entries}
    entries: list[dict[str, Any]] = [
        {
            **entry.model_dump(mode="json"),
            "curated": entry.id in curated,
            "final": entry.id in final,
            "shown": entry.id in shown,
        }
        for entry in candidates
    ]
    if json_out:
        print_json({"task": task, "state": checklist.state, "entries": entries})
        return
    table = Table("id", "rubric", "from", "curated", "final", "text")
    for e in entries:
        if not (show_all or e["shown"] or e["curated"] or e["final"]):
            continue
        source = e["provenance"]
        made_by = (
            f"{source['action']} by {source['person']}" if "person" in source else f"drafted by {source.get('model')}"
        )
        table.add_row(
            e["id"], e["rubric"], made_by, "yes" if e["curated"] else "", "yes" if e["final"] else "", e["text"]
        )
    out_console.print(table)
    out_console.print(f"task {task}: {checklist.state}, {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}")
    if hidden and not show_all:
        more = ", ".join(f"{n} {rubric}" for rubric, n in hidden.items())
        out_console.print(
            f"not shown (past [judge] draft_shown per rubric): {more}; list them with --all", markup=False
        )


def register(judge_app: typer.Typer) -> None:
    judge_app.add_typer(checklist_app, name="checklist")
