"""``curate ui``: the annotation UI (Streamlit) on the chosen workspace, on 127.0.0.1 by default."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from .common import err_console, fail, open_workspace

app = typer.Typer(help="Open the annotation UI in a browser: authoring, review stages, dashboard.")

FORWARDED = (signal.SIGTERM, signal.SIGINT)
"""The signals that stop ``curate ui``: each is sent on to the server, which stops the way it does when sent it."""
STOP_GRACE_S = 15.0
"""How long the server may take to stop after the first forwarded signal before it is killed (a second signal
kills it at once)."""


def streamlit_command(entry: Path, address: str, port: int) -> list[str]:
    """The ``streamlit run`` command line (headless: the person opens the printed URL). No file watcher: a served
    app that re-imports its modules when a file changes under it fails mid-session ("Table 'person' is already
    defined"); an update of the code takes a restart of ``curate ui``. No full garbage collection after every
    script run (``runner.postScriptGC``): with eight people on one queue it was a fifth of the server's time,
    holding the interpreter lock while other people's pages waited (Python still collects as it goes)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(entry),
        "--server.address",
        address,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--client.toolbarMode",
        "viewer",
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        "--runner.postScriptGC",
        "false",
    ]


@app.callback(invoke_without_command=True)
def ui(
    port: Annotated[int, typer.Option("--port", "-p", help="Port to serve on.", min=1, max=65535)] = 8501,
    address: Annotated[
        str, typer.Option(help="Address to bind; the default serves this machine only. 0.0.0.0 exposes it.")
    ] = "127.0.0.1",
) -> None:
    """Serve the annotation UI until interrupted (Ctrl+C). Needs the `ui` extra: pip install 'omnicurate[ui]'."""
    ws = open_workspace()
    if importlib.util.find_spec("streamlit") is None:
        raise fail("the annotation UI is not installed: pip install 'omnicurate[ui]'")
    spec = importlib.util.find_spec("annotation_ui.entry.main")
    if spec is None or spec.origin is None:
        raise fail("the annotation UI's entry script is missing: reinstall omnicurate")
    entry = Path(spec.origin)
    env = {**os.environ, "CURATE_WORKSPACE": str(ws.root)}
    ws.close()
    err_console.print(f"annotation UI for {ws.root} at http://{address}:{port} (Ctrl+C stops it)")
    raise typer.Exit(serve(streamlit_command(entry, address, port), env))


def serve(command: Sequence[str], env: Mapping[str, str]) -> int:
    """Run the server COMMAND as a child process until it exits, and return its exit code (128 + N when it died
    of signal N).

    SIGTERM and SIGINT sent to this process are sent on to the server (a service manager or ``kill`` stops
    ``curate ui`` alone; Ctrl+C in a terminal reaches both, and a repeated SIGINT is harmless to Streamlit), then
    the server is waited for: nothing keeps listening after ``curate ui`` ends. A server still running
    ``STOP_GRACE_S`` after the first signal, or when a second one comes, is killed."""
    child: subprocess.Popen[bytes] | None = None
    received: list[float] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        received.append(time.monotonic())
        if child is None or child.poll() is not None:
            return  # not started yet (sent once it is) or already gone
        if len(received) > 1:
            child.kill()
        else:
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        try:
            child = subprocess.Popen(list(command), env=dict(env))
        except OSError as exc:
            raise fail(f"the annotation UI could not start: {exc}") from exc
        if received:  # a signal came before the server existed
            child.terminate()
        while True:
            try:
                code = child.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                if received and time.monotonic() - received[0] > STOP_GRACE_S:
                    child.kill()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 - code if code < 0 else code
