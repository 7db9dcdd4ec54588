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
