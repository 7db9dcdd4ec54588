"""Fixtures of the annotation UI tests: a workspace with people and a scene group in review; a real\n``streamlit run`` server and Debian's chromium for the browser test."""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest
import streamlit.components.v2.manifest_scanner as manifest_scanner
from media_factory import item_row, write_items
from ui_helpers import CONTEXT, SERVED, add_people, chromium_path, promote_story

from curation.items import import_items
from curation.workspace import Workspace
from tests.conftest import WorkspaceTemplates, clone_workspace, drop_database

manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)
"""Every new ``AppTest`` scans every installed distribution's metadata for Streamlit components (0.3-0.8 CPU-s,
most of a short page test); the installed packages do not change during a test run, so they are scanned once."""


def _build_ui_workspace(root: Path) -> None:
    """What ``ui_workspace`` holds, built at ROOT (a new folder, or a PostgreSQL workspace made there)."""
    ws = Workspace.open(root) if root.exists() else Workspace.init(root)
    add_people(ws)
    rows = [item_row("g1-a", answer="A", context=CONTEXT), item_row("g1-b", answer="B", context=CONTEXT)]
    import_items(ws, write_items(root.parent / "src", rows))
    ws.close()


@pytest.fixture(scope="session")
def ui_templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkspaceTemplates]:
    """``ui_workspace``'s workspace, built once per run on SQLite (shared by the pytest-xdist workers) and once per
    process on PostgreSQL; each test takes a copy (its import and people cost 0.2 s a test, over 150 tests)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, which every worker's own folder is in
    templates = WorkspaceTemplates(tmp_path_factory.mktemp("ui-template"), _build_ui_workspace, shared / "ui-template")
    yield templates
    for drop in templates.drops:
        drop()


@pytest.fixture
def ui_workspace(tmp_path: Path, db_backend: str, ui_templates: WorkspaceTemplates) -> Iterator[Workspace]:
    """Group g1 (audio-perturbed): g1-a (answer A) and g1-b (answer B) by ann1 (who also reviews), awaiting grammar;
    the people of ``ui_helpers.PEOPLE``. A copy of ``ui_templates``' workspace, at ``tmp_path / "ws"``."""
    template, template_db = ui_templates[db_backend]
    ws = clone_workspace(template, tmp_path / "ws", template_db)
    yield ws
    ws.close()
    if template_db is not None:
        drop_database(ws.settings.database.url)


@pytest.fixture
def story_workspace(workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """Three promoted story transitions awaiting the filter stage; reviewers rev1 and rev2."""
    promote_story(workspace, tmp_path / "corpus")
    monkeypatch.setenv("CURATE_WORKSPACE", str(workspace.root))
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
def serve_app(tmp_path: Path) -> Iterator[Callable[[Workspace], str]]:
    """``start(ws)``: run the app with ``streamlit run`` on a free 127.0.0.1 port over that workspace and return
    its URL; every server started is stopped (by its process) and its workspace closed at the end."""
    started: list[tuple[subprocess.Popen, IO[str], Workspace]] = []

    def start(ws: Workspace) -> str:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        from omnicurate.cli.ui import streamlit_command

        env = {**os.environ, "CURATE_WORKSPACE": str(ws.root)}
        log_path = tmp_path / f"streamlit-{port}.log"
        log = log_path.open("w")
        proc = subprocess.Popen(
            streamlit_command(SERVED, "127.0.0.1", port), env=env, stdout=log, stderr=subprocess.STDOUT
        )
        started.append((proc, log, ws))
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        return url
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start:\n{log_path.read_text()}")
            time.sleep(0.2)

    try:
        yield start
    finally:
        for proc, log, ws in started:
            proc.terminate()
            proc.wait(timeout=20)
            log.close()
            ws.close()


@pytest.fixture
def streamlit_server(tmp_path: Path, serve_app: Callable[[Workspace], str]) -> tuple[str, Workspace, Path]:
    """The app over a workspace with item g1-a awaiting grammar; yields (url, workspace, the items' media folder)."""
    ws = Workspace.init(tmp_path / "ws")  # SQLite only: one browser test is enough per run
    add_people(ws)
    import_items(ws, write_items(tmp_path / "src", [item_row("g1-a", answer="A", context=CONTEXT)]))
    return serve_app(ws), ws, tmp_path / "src" / "media"
