"""Fixtures for release tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from curation.workspace import Workspace
from tests.exports.workspace_factory import fill_workspace, group_rows


@pytest.fixture
def admitted_ws(make_workspace: Callable[[str], Workspace], tmp_path: Path) -> Workspace:
    """Four admitted items in two scene groups (g1 with 4 options, g2 with 3)."""
    ws = make_workspace("ws")
    fill_workspace(ws, tmp_path / "input", group_rows("g1") + group_rows("g2", options=3, language="zh"))
    return ws


def _demo_folder(tmp_path_factory: pytest.TempPathFactory, kind: str) -> Path:
    from typer.testing import CliRunner

    from omnicurate.cli.main import app

    root = tmp_path_factory.mktemp(kind) / "ws"
    assert CliRunner().invoke(app, ["demo", str(root), "--kind", kind], catch_exceptions=False).exit_code == 0
    return root


@pytest.fixture(scope="module")
def judge_demo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The judge demo's folder, built once per test module (its tests build releases in it)."""
    return _demo_folder(tmp_path_factory, "judge")


@pytest.fixture(scope="module")
def story_demo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The story demo's folder, built once per test module (its tests build releases in it)."""
    return _demo_folder(tmp_path_factory, "story")
