"""Fixtures for release tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from curation.workspace import Workspace
from tests.conftest import DemoTemplates
from tests.exports.workspace_factory import fill_workspace, group_rows


@pytest.fixture
def admitted_ws(make_workspace: Callable[[str], Workspace], tmp_path: Path) -> Workspace:
    """Four admitted items in two scene groups (g1 with 4 options, g2 with 3)."""
    ws = make_workspace("ws")
    fill_workspace(ws, tmp_path / "input", group_rows("g1") + group_rows("g2", options=3, language="zh"))
    return ws


def _demo_folder(tmp_path_factory: pytest.TempPathFactory, demo_templates: DemoTemplates, kind: str) -> Path:
    root = tmp_path_factory.mktemp(kind) / "ws"
    demo_templates.copy(kind, root).close()
    return root


@pytest.fixture(scope="module")
def judge_demo_folder(tmp_path_factory: pytest.TempPathFactory, demo_templates: DemoTemplates) -> Path:
    """A judge demo's folder of this test module's own (its tests build releases in it): a copy of the template."""
    return _demo_folder(tmp_path_factory, demo_templates, "judge")


@pytest.fixture(scope="module")
def story_demo_folder(tmp_path_factory: pytest.TempPathFactory, demo_templates: DemoTemplates) -> Path:
    """A story demo's folder of this test module's own (its tests build releases in it): a copy of the template."""
    return _demo_folder(tmp_path_factory, demo_templates, "story")
