"""``curate status`` and its siblings start without the other command modules, and behave as in the full app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import typer.main
from typer.core import TyperGroup

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
    probe = (
        "import sys, runpy; sys.argv = ['curate', '-w', sys.argv[1], 'status', '--json']\n"
        "try:\n    runpy.run_module('omnicurate', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('omnicurate.cli.')), file=sys.stderr)"
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
