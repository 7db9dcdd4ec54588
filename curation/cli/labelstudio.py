"""``curate ls ...`` and ``curate campaign ...``: review stages and rating campaigns on a Label Studio server.

The bridge lives in ``annotation_ui.labelstudio`` (extra ``labelstudio``); it is imported only when a
command runs, so ``curate --help`` stays fast and works without the SDK installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import err_console, open_workspace, out_console, print_json

app = typer.Typer(
    help="Label Studio: push review stages as projects, pull annotations back as review records.",
    no_args_is_help=True,
)
campaign_app = typer.Typer(
    help="Rating campaigns over model outputs, served through Label Studio (score or pairwise A/B/tie).",
    no_args_is_help=True,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
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


@app.command("status")
def status_cmd(json_out: JsonFlag = False) -> None:
    """Check the connection settings: the server answers and accepts the token."""
    from annotation_ui.labelstudio.connection import status

    info = status(_connection(open_workspace()))
    if json_out:
        print_json(info)
        return
    out_console.print(
        f"Label Studio {info['version']} at {info['url']}: signed in as {info['user']['email']} "
        f"(user {info['user']['id']}); media root {info['document_root'] or 'not set'}",
        highlight=False,
    )


@app.command("push")
def push_cmd(
    stage: Annotated[
        str, typer.Argument(help="grammar, audio_signoff, subset_checklist, answer_check or group_integration.")
    ],
    recreate: RecreateFlag = False,
    json_out: JsonFlag = False,
) -> None:
    """Create or update STAGE's project and import its pending items as tasks (pushing again adds nothing)."""
    from annotation_ui.labelstudio.stages import push_stage

    ws = open_workspace()
    report = push_stage(ws, _connection(ws), stage, recreate)
    if json_out:
        print_json({"stage": stage, **report.as_json()})
    else:
        out_console.print(f"{stage}: {report.summary()}", highlight=False)


@app.command("pull")
def pull_cmd(
    stage: Annotated[str | None, typer.Argument(help="The stage to pull (default: every pushed stage).")] = None,
    strict: Annotated[bool, typer.Option(help="Exit with code 1 when an annotation was refused.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Validate every annotation and record the acceptable ones as review records (pulling twice adds nothing)."""
    from annotation_ui.labelstudio.stages import pull_stages, pushed_stages

    ws = open_workspace()
    stages = [stage] if stage else pushed_stages(ws)
    if not stages:
        err_console.print("nothing to pull: no stage was pushed from this workspace (curate ls push STAGE)")
        raise typer.Exit(2)
    reports = pull_stages(ws, _connection(ws), stages)
    if json_out:
        print_json([r.as_json() for r in reports])
    else:
        for r in reports:
            out_console.print(r.summary(), highlight=False)
            for refusal in r.refused:
                err_console.print(
                    f"refused: annotation {refusal.annotation} (task {refusal.task}, {refusal.subject}, "
                    f"{refusal.user}): {refusal.reason}",
                    highlight=False,
                    markup=False,
                )
    if strict and any(r.refused for r in reports):
        raise typer.Exit(1)
