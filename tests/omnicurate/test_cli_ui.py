"""``curate ui``: launches ``streamlit run`` on the annotation UI's entrypoint for the chosen workspace."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devsupport.ui_team import wait_healthy
from omnicurate.cli import ui as ui_cli
from omnicurate.cli.main import app


def test_ui_serves_the_workspace_on_localhost(workspace, monkeypatch):
    calls = []

    def fake_serve(command, env):  # type: ignore[no-untyped-def]
        calls.append((command, env))
        return 0

    monkeypatch.setattr(ui_cli, "serve", fake_serve)
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
    monkeypatch.setattr(ui_cli, "serve", lambda *a, **k: 0)
    result = CliRunner().invoke(app, ["-w", str(tmp_path), "ui"])
    assert result.exit_code == 2 and "not a workspace" in result.output


def test_ui_has_help_for_every_option():
    result = CliRunner().invoke(app, ["ui", "--help"])
    assert result.exit_code == 0 and "--port" in result.output and "--address" in result.output


# ----- issue 39, case 7: stopping `curate ui` stops the server it started -------------------------------------


def _children(pid: int) -> list[int]:
    """Every live descendant of PID (Linux: /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent:
                found.append(child)
                frontier.append(child)
    return found


def _alive(pid: int) -> bool:
    """PID runs (a zombie nobody reaped counts as gone only once reaped: it still holds its pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the server's process in /proc (Linux)")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_curate_ui_stops_the_server_it_started(workspace, tmp_path, stop):
    port = _free_port()
    log = (tmp_path / "ui.log").open("w+")
    curate = subprocess.Popen(
        [sys.executable, "-m", "omnicurate", "-w", str(workspace.root), "ui", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    servers: list[int] = []
    try:
        wait_healthy(f"http://127.0.0.1:{port}", curate, tmp_path / "ui.log")
        servers = _children(curate.pid)
        commands = [Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") for pid in servers]
        assert [c[1:4] for c in commands] == [[b"-m", b"streamlit", b"run"]], commands  # the one server

        os.kill(curate.pid, stop)  # the `curate` process only, as a service manager or `kill` does
        code = curate.wait(timeout=30)
        assert code == 0, (tmp_path / "ui.log").read_text()  # the server stopped as asked
        assert not _listening(port)
        assert [pid for pid in servers if _alive(pid)] == []
    finally:
        for pid in [curate.pid, *servers]:
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        curate.wait(timeout=10)
        log.close()


_STUBBORN = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(120)
"""
_SERVE = """
import sys
from omnicurate.cli.ui import serve
print("code", serve([sys.executable, "-c", sys.argv[1]], {}), flush=True)
"""


def test_a_server_that_ignores_the_signal_is_killed_on_the_second():
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, _STUBBORN], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        (server,) = _children(proc.pid)
        os.kill(proc.pid, signal.SIGTERM)
        time.sleep(0.5)
        assert _alive(server) and proc.poll() is None  # forwarded, ignored, still waited for
        os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
        assert out == f"code {128 + signal.SIGKILL}\n" and not _alive(server)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
