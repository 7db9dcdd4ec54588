"""``curate ui``: the annotation UI (Streamlit) on the chosen workspace, on 127.0.0.1 by default."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from .common import err_console, fail, open_workspace

app = typer.Typer(help="Open the annotation UI in a browser: authoring, review stages, dashboard.")


def streamlit_command(entry: Path, address: str, port: int) -> list[str]:
    """The ``streamlit run`` command line (headless: the person opens the printed URL). No file watcher: a served
    app that re-imports its modules when a file changes under it fails mid-session ("Table 'person' is already
    defined"); an update of the code takes a restart of ``curate ui``."""
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
    try:
        code = subprocess.call(streamlit_command(entry, address, port), env=env)
    except KeyboardInterrupt:
        code = 0
    raise typer.Exit(code)
