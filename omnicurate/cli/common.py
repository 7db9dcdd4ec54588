"""Helpers every CLI module shares: the chosen workspace, JSON output, error reporting."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console

err_console = Console(stderr=True)
out_console = Console()

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


class CliState:
    """Global options, set by the root callback before any subcommand runs."""

    workspace: Path | None = None


def workspace_dir() -> Path:
    """``-w/--workspace``, else ``$CURATE_WORKSPACE``, else the current folder."""
    if CliState.workspace is not None:
        return CliState.workspace
    env = os.environ.get("CURATE_WORKSPACE")
    return Path(env) if env else Path.cwd()


def open_workspace():  # type: ignore[no-untyped-def]
    from curation.workspace import Workspace

    ws = Workspace.open(workspace_dir())
    from exports.pending import has_pending

    if has_pending(ws.root):
        from exports.build import reconcile_releases

        reconcile_releases(ws)  # a release build died between its rename and its commit: finish or undo it
    return ws


def print_json(document: Any) -> None:
    """Exactly one JSON document on stdout, with plain print (rich would wrap it)."""
    print(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str).decode())
    sys.stdout.flush()


def fail(message: str, code: int = 2) -> typer.Exit:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)
