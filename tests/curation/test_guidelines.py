"""Per-stage guidelines read from the workspace: absent, present, and refused with a reason."""

from __future__ import annotations

import pytest

from curation.errors import ValidationFailed
from curation.guidelines import MAX_BYTES, guidelines_path, stage_guidelines
from curation.workspace import Workspace


def test_guidelines_are_read_from_the_workspace(workspace: Workspace) -> None:
    assert stage_guidelines(workspace, "grammar") is None
    path = guidelines_path(workspace, "grammar")
    assert path == workspace.root / "guidelines" / "grammar.md"
    path.parent.mkdir()
    path.write_text("\ufeff# 语法\n\nOptions read as a set.\n", encoding="utf-8")
    assert stage_guidelines(workspace, "grammar") == "# 语法\n\nOptions read as a set."
    path.write_text("  \n", encoding="utf-8")
    assert stage_guidelines(workspace, "grammar") is None  # an empty file is no guideline


@pytest.mark.parametrize("name", ["../curate", "Grammar", "a/b", ""])
def test_a_page_name_never_leaves_the_folder(workspace: Workspace, name: str) -> None:
    with pytest.raises(ValidationFailed, match="no stage or page name"):
        guidelines_path(workspace, name)


def test_too_large_or_not_utf8_is_refused_with_the_file(workspace: Workspace) -> None:
    path = guidelines_path(workspace, "filter")
    path.parent.mkdir()
    path.write_bytes(b"caf\xe9\n")
    with pytest.raises(ValidationFailed, match=r"filter\.md:1: guidelines: not UTF-8 text \(.* at byte 4\)"):
        stage_guidelines(workspace, "filter")
    path.write_bytes(b"x" * (MAX_BYTES + 1))
    with pytest.raises(ValidationFailed, match=f"filter.md: guidelines: larger than the limit of {MAX_BYTES:,} bytes"):
        stage_guidelines(workspace, "filter")
