"""Shared fixtures: workspaces on SQLite and PostgreSQL, and the markers that say what a test needs.

Markers (pyproject.toml) select tests, not the environment: ``service`` (PostgreSQL, Label Studio, vLLM),
``browser`` (headless Chromium), ``gpu`` (an accelerator), ``slow`` (a minute or more). A developer deselects
with ``-m "not service"``; a test whose service is missing is skipped with the way to set it up, except in CI
(CI=true), where it fails. Optional tools and extras (ffmpeg, fpcalc, torch, lm-format-enforcer) are the same:
``require_tool`` / ``require_module`` skip with the command that installs them, and fail under CI=true.
"""

from __future__ import annotations

import importlib
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

from curation.workspace import Workspace

PG_URL = os.environ.get("CURATE_TEST_PG_URL", "")
IN_CI = os.environ.get("CI") == "true"
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.service)]
SERVICE_FIXTURES = {
    "ls_server": ("service",),
    "vllm_python": ("service", "slow"),
    "streamlit_server": ("browser",),
    "serve_app": ("browser",),
}
"""Fixtures that start or need a service: every test using one (directly or through another) gets its marks."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for fixture, marks in SERVICE_FIXTURES.items():
            if fixture in used:
                for mark in marks:
                    item.add_marker(mark)


def missing_service(message: str, marker: str = "service") -> None:
    """Fail in CI, else skip saying how to set the service up or deselect it."""
    if IN_CI:
        pytest.fail(f"CI=true but {message}")
    pytest.skip(f"{message} (or deselect these tests with -m 'not {marker}')")


def missing_tool(message: str) -> NoReturn:
    """An optional tool or extra is absent: fail in CI (which installs them all), else skip saying how to add it."""
    if IN_CI:
        pytest.fail(f"CI=true but {message}")
    pytest.skip(message)


INSTALL_TORCH = (
    "pip install torch==2.13.0 transformers tokenizers && pip install --no-deps torchvision==0.28.0 "
    "(bash .ci/setup.d/40-checker.sh does this)"
)
INSTALL_CHECKER = "pip install -e '.[checker]' after a CPU torch (bash .ci/setup.d/40-checker.sh does both)"
INSTALL_TOOLS = {
    "ffmpeg": "apt-get install ffmpeg",
    "ffprobe": "apt-get install ffmpeg",
    "fpcalc": "apt-get install libchromaprint-tools",
    "sox": "apt-get install sox",
    "espeak-ng": "apt-get install espeak-ng",
}
"""How each optional system tool is installed (.ci/run installs them all)."""


def require_tool(name: str) -> str:
    """The tool's path; when it is not on the PATH, skip (fail under CI=true) with the command that installs it."""
    found = shutil.which(name)
    if found is None:
        missing_tool(f"{name} is not on the PATH: {INSTALL_TOOLS.get(name, 'install it')}")
    return found


def require_module(name: str, install: str) -> ModuleType:
    """An optional Python package, imported; when it is absent, skip (fail under CI=true) saying ``install``."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing_tool(f"{name} cannot be imported ({exc}): {install}")


def _pg_database() -> tuple[str, Callable[[], None]]:
    """A fresh, empty PostgreSQL database and a function that drops it."""
    if not PG_URL:
        missing_service("CURATE_TEST_PG_URL is not set: start PostgreSQL and point it there (.ci/run does)")
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"oc_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return url, drop


@pytest.fixture(params=BACKENDS)
def db_backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_workspace(tmp_path: Path, db_backend: str) -> Iterator[Callable[[str], Workspace]]:
    """Factory: ``make_workspace("name")`` creates a fresh workspace on the test's database backend."""
    cleanups: list[Callable[[], None]] = []
    opened: list[Workspace] = []

    def make(name: str = "ws") -> Workspace:
        url = None
        if db_backend == "postgres":
            url, drop = _pg_database()
            cleanups.append(drop)
        ws = Workspace.init(tmp_path / name, url)
        opened.append(ws)
        return ws

    yield make
    for ws in opened:
        ws.close()
    for cleanup in cleanups:
        cleanup()


@pytest.fixture
def workspace(make_workspace: Callable[[str], Workspace]) -> Workspace:
    return make_workspace("ws")


@pytest.fixture
def demo_workspace(tmp_path: Path, db_backend: str) -> Iterator[Workspace]:
    """The bundled demo, built into a fresh workspace (on either backend)."""
    from omnicurate.demo import build_demo

    drop = None
    root = tmp_path / "demo"
    if db_backend == "postgres":
        url, drop = _pg_database()
        Workspace.init(root, url).close()
    ws = build_demo(root, log=lambda _msg: None)
    yield ws
    ws.close()
    if drop:
        drop()
