"""Publication journals: the trace a release build leaves between renaming its folder into place and
registering the version, so that the next command can finish (or undo) a build that died in between.

Kept apart from ``build`` so that every command can test for a journal without importing the build.
"""

from __future__ import annotations

from pathlib import Path

PENDING = ".releases-pending"
"""Workspace folder of publication journals: one per version being renamed into place and registered."""


def journal_path(root: Path, version: str) -> Path:
    return root / PENDING / f"{version}.json"


def has_pending(root: Path) -> bool:
    """Whether a journal is waiting (cheap: one directory listing)."""
    folder = root / PENDING
    return folder.is_dir() and any(folder.glob("*.json"))
