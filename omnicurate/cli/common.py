"""Helpers every CLI module shares: the chosen workspace, output for people and for pipes, paths, errors.

Conventions (docs/cli-conventions.md): ``--json`` prints one JSON document with full
precision; human output rounds numbers; to a pipe, tables print as TSV and lines are never wrapped; a path on
the command line is relative to the current folder.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text


class PipeAwareConsole(Console):
    """A rich console that prints for people on a terminal and whole lines to a pipe or file.

    To a terminal: rich tables and wrapped lines. Otherwise: a table becomes TSV (a header line, then one line
    per row, tabs and newlines inside a cell escaped as ``\\t`` and ``\\n``; a title becomes a ``# title``
    line) and no line is wrapped or cut at the console's width, so ``grep``, ``cut`` and ``awk`` see whole words.
    """

    def print(self, *objects: Any, **kwargs: Any) -> None:  # type: ignore[override]
        if self.is_terminal:
            super().print(*objects, **kwargs)
            return
        if len(objects) == 1 and isinstance(objects[0], Table):
            self.file.write(table_as_tsv(objects[0], self))
            self.file.flush()
            return
        kwargs.setdefault("soft_wrap", True)
        super().print(*objects, **kwargs)

    def on_broken_pipe(self) -> None:
        """Rich would exit 1 here; the root command stops quietly instead (exit 0)."""
        self.quiet = True
        raise BrokenPipeError


def _plain(cell: Any, console: Console) -> str:
    if isinstance(cell, Text):
        text = cell.plain
    elif isinstance(cell, str):
        text = console.render_str(cell).plain  # the markup a terminal would colour, without it
    else:
        text = str(cell)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def table_as_tsv(table: Table, console: Console) -> str:
    """A rich table as tab-separated values: header, then rows (every cell whole)."""
    lines = [f"# {_plain(table.title, console)}"] if table.title else []
    lines.append("\t".join(_plain(column.header, console) for column in table.columns))
    cells = [list(column._cells) for column in table.columns]
    for row in range(table.row_count):
        lines.append("\t".join(_plain(column[row], console) if row < len(column) else "" for column in cells))
    return "\n".join(lines) + "\n"


err_console = PipeAwareConsole(stderr=True)
"""Notes, summaries and progress: to a terminal drawn for people, to a pipe or file as whole lines, never
wrapped at 80 columns."""
out_console = PipeAwareConsole()
"""Only the table or the JSON a script reads."""


def progress_bar(*columns: Any) -> Any:
    """A transient progress bar on standard error, drawn only on a terminal: to a pipe or a file it prints nothing
    (a log keeps no ``━━━`` bars); commands print their own summary lines instead."""
    from rich.progress import Progress

    return Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal)


JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document (full precision).")]


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
        from exports.publish import reconcile_releases

        reconcile_releases(ws)  # a release build died between its rename and its commit: finish or undo it
    return ws


def print_json(document: Any) -> None:
    """Exactly one JSON document on stdout, with plain print (rich would wrap it)."""
    print(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str).decode())
    sys.stdout.flush()


def fail(message: str, code: int = 2) -> typer.Exit:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def figure(value: float | None, digits: int = 3) -> str:
    """A number for people: rounded (integers stay whole); ``—`` for a missing one. ``--json`` keeps full precision."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def for_people(value: Any, digits: int = 3) -> str:
    """Any report value as people read it: numbers rounded, ``key value`` pairs, nested parts in parentheses —
    never a Python repr (``{'pearson': 0.7803787543725623}`` reads ``pearson 0.780``)."""
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            shown = for_people(item, digits)
            parts.append(f"{key} ({shown})" if isinstance(item, dict) and item else f"{key} {shown}")
        return ", ".join(parts) or "none"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(for_people(v, digits) for v in value) + "]"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or isinstance(value, int | float):
        return figure(value, digits)
    return str(value)


def cli_path(path: Path | str, what: str = "path", must_exist: bool = True, file: bool = False) -> Path:
    """A path given on the command line, relative to the current folder (the one path rule).

    A missing one is refused (exit 2) naming the folder it was looked up in, and, when the same relative path
    exists inside the workspace, the path to type instead. With ``file``, one that exists but is not a regular
    file is refused as what it is (a folder, a FIFO, a device), never read."""
    given = Path(path).expanduser()
    resolved = given if given.is_absolute() else Path.cwd() / given
    if file and resolved.exists():
        from curation.errors import Problem, ValidationFailed
        from curation.jsonl import not_a_file

        if (why := not_a_file(resolved)) is not None:
            raise ValidationFailed([Problem(f"{why}; give the file itself", what, file=str(path))], "nothing was read")
    if must_exist and not resolved.exists():
        from curation.errors import NotFoundError

        hint = ""
        ws = workspace_dir()
        if not given.is_absolute() and (ws / given).exists():
            hint = f"; did you mean {os.path.relpath(ws / given)} (inside the workspace)?"
        raise NotFoundError(
            f"{what} {str(path)!r} does not exist (paths on the command line are relative to the current "
            f"folder, {Path.cwd()}){hint}"
        )
    return resolved


def checked_backend(spec: str, option: str = "--backend") -> str:
    """A backend spec typed on the command line, its ``replay:FILE`` checked by the path rule first: a file that
    is missing, or is a folder, a FIFO or a device, is named as such here (a backend would only say "does not
    exist", or wait on a FIFO for ever). Other specs are returned as given."""
    kind, sep, target = spec.partition(":")
    if kind == "replay" and sep and target:
        cli_path(target, f"{option} replay file", file=True)
    return spec
