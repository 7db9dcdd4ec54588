"""``curate ui``: launches ``streamlit run`` on the annotation UI's entrypoint for the chosen workspace."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from omnicurate.cli import ui as ui_cli
from omnicurate.cli.main import app


def test_ui_serves_the_workspace_on_localhost(workspace, monkeypatch):
    calls = []

    def fake_call(command, env):  # type: ignore[no-untyped-def]
        calls.append((command, env))
        return 0

    monkeypatch.setattr(ui_cli.subprocess, "call", fake_call)
    result = CliRunner().invoke(app, ["-w", str(workspace.root), "ui", "--port", "8599"])
    assert result.exit_code == 0, result.output
    ((command, env),) = calls
    assert command[1:4] == ["-m", "streamlit", "run"]
    entry = Path(command[4])
    assert entry.name == "main.py" and entry.parent.name == "entry" and entry.is_file()  # it runs app.py
    assert "pages" not in {p.name for p in entry.parent.iterdir()}  # no pages/ beside it: no old multipage mode
    assert command[command.index("--server.address") + 1] == "127.0.0.1"
    assert command[command.index("--server.port") + 1] == "8599"
    assert command[command.index("--server.fileWatcherType") + 1] == "none"  # no re-import mid-session
    assert env["CURATE_WORKSPACE"] == str(workspace.root)


def test_ui_refuses_a_folder_that_is_not_a_workspace(tmp_path, monkeypatch):
    monkeypatch.setattr(ui_cli.subprocess, "call", lambda *a, **k: 0)
    result = CliRunner().invoke(app, ["-w", str(tmp_path), "ui"])
    assert result.exit_code == 2 and "not a workspace" in result.output


def test_ui_has_help_for_every_option():
    result = CliRunner().invoke(app, ["ui", "--help"])
    assert result.exit_code == 0 and "--port" in result.output and "--address" in result.output
