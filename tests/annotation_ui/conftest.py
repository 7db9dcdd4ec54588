"""Fixture of the annotation UI tests: a workspace with people and a scene group in review."""

from __future__ import annotations

from pathlib import Path

import pytest
from media_factory import item_row, write_items
from ui_helpers import CONTEXT, add_people

from curation.items import import_items
from curation.workspace import Workspace


@pytest.fixture
def ui_workspace(workspace: Workspace, tmp_path: Path) -> Workspace:
    """Group g1 (audio-perturbed): g1-a (answer A) and g1-b (answer B) by ann1 (who also reviews), awaiting grammar."""
    add_people(workspace)
    rows = [item_row("g1-a", answer="A", context=CONTEXT), item_row("g1-b", answer="B", context=CONTEXT)]
    import_items(workspace, write_items(tmp_path / "src", rows))
    return workspace
