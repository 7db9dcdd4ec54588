"""``curate status`` and its siblings start without the other command modules, and behave as in the full app."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import typer.main
from typer.core import TyperGroup
from typer.testing import CliRunner

from curation.workspace import Workspace
from omnicurate.cli import main, workspace_cmds


def test_the_workspace_commands_table_is_what_their_module_registers() -> None:
    root = main._new_app()
    workspace_cmds.register(root)
    group = typer.main.get_command(root)
    assert isinstance(group, TyperGroup)
    assert set(group.commands) == main._WORKSPACE_COMMANDS
    full = typer.main.get_command(main.app)
    assert isinstance(full, TyperGroup)
    assert set(full.commands) >= main._WORKSPACE_COMMANDS


def test_only_a_plain_call_of_a_command_takes_the_short_way() -> None:
    assert main._invoked(["status", "--json"]) == "status"
    assert main._invoked(["-w", "ws", "status"]) == "status"
    assert main._invoked(["--workspace=ws", "funnel"]) == "funnel"
    assert main._invoked(["-wws", "init"]) == "init"
    assert main._invoked(["--help", "status"]) is None
    assert main._invoked(["-w"]) is None
    assert main._invoked([]) is None


def _curate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "omnicurate", *args], capture_output=True, text=True, check=False)


def test_status_starts_without_the_other_command_modules_and_says_the_same(tmp_path: Path) -> None:
    Workspace.init(tmp_path / "ws")
    probe = (  # status ends without teardown, but after the exit functions
        "import atexit, sys, runpy; sys.argv = ['curate', '-w', sys.argv[1], 'status', '--json']\n"
        "atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith('omnicurate.cli.')),"
        " file=sys.stderr))\n"
        "runpy.run_module('omnicurate', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "ws")], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
    loaded = done.stderr.strip().splitlines()[-1]
    assert "omnicurate.cli.workspace_cmds" in loaded
    assert "omnicurate.cli.release" not in loaded and "omnicurate.cli.judge" not in loaded
    # the short way and the full app give the same help and the same errors
    short = _curate("status", "--help")
    full = _curate("--help")
    assert short.returncode == 0 and "--json" in short.stdout
    assert "release" in full.stdout and "status" in full.stdout
    bad = _curate("-w", str(tmp_path / "ws"), "status", "--state")
    assert bad.returncode == 2 and "requires an argument" in bad.stderr
    missing = _curate("-w", str(tmp_path / "nowhere"), "status")
    assert missing.returncode != 0 and "error" in missing.stderr.lower()


_TEARDOWN_PROBE = textwrap.dedent(
    """
    import atexit, os, runpy, sys

    class Witness:  # freed by the interpreter's teardown, if there is one
        def __del__(self):
            os.write(2, b"torn down\\n")

    witness = Witness()
    atexit.register(lambda: os.write(2, b"exit functions ran\\n"))
    sys.argv = ["curate", *sys.argv[1:]]
    runpy.run_module("omnicurate", run_name="__main__")
    """
)


def _probe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _TEARDOWN_PROBE, *args], capture_output=True, text=True, check=False)


def test_read_only_commands_end_without_teardown_and_say_what_the_full_app_says(demo_workspace: Workspace) -> None:
    root = str(demo_workspace.root)
    expected = CliRunner().invoke(main.app, ["-w", root, "status", "--json"], catch_exceptions=False)
    assert expected.exit_code == 0, expected.output
    for command in ("status", "funnel"):
        done = _probe("-w", root, command, "--json")
        assert done.returncode == 0, done.stderr
        assert "exit functions ran" in done.stderr and "torn down" not in done.stderr
        if command == "status":
            assert json.loads(done.stdout) == json.loads(expected.stdout)
        else:
            assert json.loads(done.stdout)["total"] == len(json.loads(expected.stdout))
    # a command that writes ends the usual way
    made = _probe("init", str(Path(root).parent / "another"))
    assert made.returncode == 0, made.stderr
    assert "exit functions ran" in made.stderr and "torn down" in made.stderr
    # an error keeps its exit code and message
    missing = _probe("-w", str(Path(root).parent / "nowhere"), "status")
    assert missing.returncode == 2 and "not a workspace" in missing.stderr


def test_leaving_without_teardown_flushes_the_output_and_waits_for_threads() -> None:
    quick = textwrap.dedent(
        """
        import sys
        from omnicurate.cli import main

        def command():
            print("said " * 40_000, end="")  # more than a pipe holds: all of it must reach the reader
            raise SystemExit(4)

        main._without_teardown(command)
        print("not reached")
        """
    )
    done = subprocess.run([sys.executable, "-c", quick], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (4, "said " * 40_000)
    threaded = textwrap.dedent(
        """
        import threading, time
        from omnicurate.cli import main

        def command():
            threading.Thread(target=lambda: (time.sleep(0.3), print("thread finished", flush=True))).start()

        main._without_teardown(command)
        """
    )
    done = subprocess.run([sys.executable, "-c", threaded], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "thread finished")
