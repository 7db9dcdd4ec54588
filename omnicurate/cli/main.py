"""Root of the ``curate`` command: global options, error handling and the subcommand groups."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from typer.core import TyperGroup

from curation.errors import CurateError, ValidationFailed

from .common import CliState, err_console


class _CurateGroup(TyperGroup):
    """Turns domain errors into clean messages and exit codes (2 bad input, 1 check failed)."""

    def invoke(self, ctx):  # type: ignore[no-untyped-def]
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a closed pipe shows here, inside the handler, not in click's (exit 1)
            return result
        except BrokenPipeError:
            _quiet_after_closed_pipe()
        except ValidationFailed as exc:
            for problem in exc.problems:
                err_console.print(str(problem), highlight=False, markup=False, soft_wrap=True)
            err_console.print(f"error: {exc.summary}", style="bold red", highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except CurateError as exc:
            err_console.print(f"error: {exc}", style="bold red", highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except OSError as exc:
            # a file the user named cannot be read or written (permissions, a full disk, a folder for a file)
            where = f"{exc.filename}: " if exc.filename else ""
            err_console.print(
                f"error: {where}{exc.strerror or exc}; check the path and its permissions",
                style="bold red",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            raise typer.Exit(2) from None


def _quiet_after_closed_pipe() -> NoReturn:
    """The reader of stdout went away (``curate status --json | head``): stop quietly, exit 0.

    Later writes (and the interpreter's final flush) go to /dev/null instead of raising again."""
    with contextlib.suppress(OSError, ValueError):  # ValueError: stdout is not a file (a test's capture)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    raise typer.Exit(0)


def _new_app() -> typer.Typer:
    """The root ``curate`` app with its global options and no subcommands yet."""
    root = typer.Typer(
        cls=_CurateGroup,
        name="curate",
        help=(
            "omnicurate: author, review, audit and release omni-modal benchmarks (`curate kinds` lists their shapes)."
        ),
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        rich_markup_mode=None,
    )
    root.callback()(_root)
    return root


def _root(
    workspace: Annotated[
        Path | None,
        typer.Option(
            "-w",
            "--workspace",
            help="Workspace folder (default: $CURATE_WORKSPACE, else the current folder).",
            file_okay=False,
        ),
    ] = None,
) -> None:
    CliState.workspace = workspace


def _register(app: typer.Typer) -> None:
    """Every subcommand (importing every command module: ``run`` spares the workspace commands this)."""
    from . import (
        adjudicate,
        agreement,
        audio,
        audit,
        baseline,
        check,
        doctor,
        items,
        judge,
        judge_lists,
        kinds,
        labelstudio,
        ls_local,
        people,
        release,
        screen,
        stats,
        study,
        transcribe,
        ui,
        workspace_cmds,
    )

    workspace_cmds.register(app)  # keep in step with _WORKSPACE_COMMANDS
    app.command("kinds")(kinds.kinds_cmd)
    app.add_typer(people.app, name="people")
    app.add_typer(audio.app, name="audio")
    items.register(app)
    screen.register(app)
    screen.story_app.add_typer(study.app, name="study")
    app.add_typer(stats.app, name="stats")
    app.add_typer(agreement.app, name="agreement")
    adjudicate.register(app)
    audit.register(app)
    ls_local.register(labelstudio.app)
    app.add_typer(labelstudio.app, name="ls")
    app.command("doctor")(doctor.doctor_cmd)
    app.add_typer(labelstudio.campaign_app, name="campaign")
    app.add_typer(release.app, name="release")
    app.add_typer(ui.app, name="ui")
    app.add_typer(check.app, name="check")
    app.command("transcribe")(transcribe.transcribe_cmd)
    app.add_typer(baseline.app, name="baseline")
    judge_lists.register(judge.app)
    app.add_typer(judge.app, name="judge")


_WORKSPACE_COMMANDS = frozenset({"init", "status", "funnel", "demo"})
"""What ``workspace_cmds`` registers: ``curate status`` and its siblings, run most often and on the largest
workspaces, start without importing and building the other command modules."""


def _invoked(args: list[str]) -> str | None:
    """The subcommand of a plain ``curate [-w DIR] NAME ...`` call; None for anything else (``--help`` first)."""
    at = 0
    while at < len(args):
        arg = args[at]
        if arg in ("-w", "--workspace"):
            at += 2
        elif arg.startswith("--workspace=") or (arg.startswith("-w") and not arg.startswith("--")):
            at += 1
        else:
            return None if arg.startswith("-") else arg
    return None


def _full_app() -> typer.Typer:
    root = _new_app()
    _register(root)
    return root


def __getattr__(name: str) -> typer.Typer:
    """``app``, the whole ``curate`` command (tests, the reference generator), is built on first use."""
    if name != "app":
        raise AttributeError(name)
    built = globals()["app"] = _full_app()
    return built


_READ_ONLY_COMMANDS = frozenset({"status", "funnel"})
"""Workspace commands that only read and close their workspace: they leave without the interpreter's teardown."""


def run() -> None:
    command = _invoked(sys.argv[1:])
    if command in _WORKSPACE_COMMANDS:
        from . import workspace_cmds

        root = _new_app()
        workspace_cmds.register(root)
        if command in _READ_ONLY_COMMANDS:
            _without_teardown(root)
        else:
            root()
    else:
        __getattr__("app")()


def _without_teardown(command: Callable[[], object]) -> NoReturn:
    """Run a command that only reads, then end the process without the interpreter's teardown.

    Tearing down every module one by one is the operating system's work, not a fifth of a second of
    ``curate status`` (measured at 10,000 items). The output is flushed and the exit functions (logging's among
    them) run first. A command that leaves a thread running, or stops with anything but an exit code, ends the
    usual way; so does an unexpected error, which propagates from here with its traceback."""
    try:
        command()
        code: object = 0
    except SystemExit as stop:
        code = 0 if stop.code is None else stop.code
    if not isinstance(code, int) or threading.active_count() > 1:
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that went away, a stream already closed
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code)
