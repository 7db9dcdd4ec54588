"""Fixtures of the annotation UI tests: a workspace with people and a scene group in review; a real\n``streamlit run`` server and Debian's chromium for the browser test."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from media_factory import item_row, write_items
from ui_helpers import APP, CONTEXT, add_people, chromium_path

from curation.items import import_items
from curation.workspace import Workspace


@pytest.fixture
def ui_workspace(workspace: Workspace, tmp_path: Path) -> Workspace:
    """Group g1 (audio-perturbed): g1-a (answer A) and g1-b (answer B) by ann1 (who also reviews), awaiting grammar."""
    add_people(workspace)
    rows = [item_row("g1-a", answer="A", context=CONTEXT), item_row("g1-b", answer="B", context=CONTEXT)]
    import_items(workspace, write_items(tmp_path / "src", rows))
    return workspace


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """pytest-playwright's browser, pointed at Debian's chromium (Playwright cannot download one here).

    In CI (CI=true) a missing chromium fails the browser test instead of skipping it.
    """
    chromium = chromium_path()
    if chromium is None:
        message = "no chromium: install Debian's `chromium` package (.ci/setup.d/30-chromium.sh) or set CURATE_CHROMIUM"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return {**browser_type_launch_args, "executable_path": chromium}


@pytest.fixture
def streamlit_server(tmp_path: Path):
    """Start the app with ``streamlit run`` on a free 127.0.0.1 port; yields (url, workspace)."""
    ws = Workspace.init(tmp_path / "ws")  # SQLite only: one browser test is enough per run
    add_people(ws)
    import_items(ws, write_items(tmp_path / "src", [item_row("g1-a", answer="A", context=CONTEXT)]))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    from omnicurate.cli.ui import streamlit_command

    env = {**os.environ, "CURATE_WORKSPACE": str(ws.root)}
    log = (tmp_path / "streamlit.log").open("w")
    proc = subprocess.Popen(streamlit_command(APP, "127.0.0.1", port), env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start:\n{(tmp_path / 'streamlit.log').read_text()}")
            time.sleep(0.2)
        yield url, ws, tmp_path / "src" / "media"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
        ws.close()
