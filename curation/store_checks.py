"""Which media store files are known to hold the bytes their names promise, without reading them again.

A store file is named by its SHA-256, and a release build checks that promise before it ships the file. On a
large workspace that hashing is most of a rebuild, though the files rarely change. So, as git does for its
index, a check remembers the file's status (device, inode, size, modification and change times) when its
bytes matched; a later build hashes the file again only when that status differs. Any write to a file, a
restore from a backup or a replacement changes its change time (which no tool can set back), so a damaged
file is still hashed and refused. A status taken within ``RACY_S`` of its check is not kept: a write in the
same clock tick could leave it unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select
from sqlmodel import col

from .file_status import RACY_S, settled, stat_key, vouched
from .tables import StoreCheck
from .workspace import Workspace

__all__ = ["RACY_S", "checked_files", "record_checked", "remember_checked", "settled", "stat_key", "vouched"]

CHUNK = 500
"""Hashes per ``IN (...)`` (SQLite limits bound parameters)."""


def checked_files(ws: Workspace) -> dict[str, str]:
    """The remembered status per content hash of every store file checked before."""
    with ws.session() as s:
        rows = s.execute(select(col(StoreCheck.sha256), col(StoreCheck.stat))).all()
    return {sha: stat for sha, stat in rows}


def record_checked(ws: Workspace, stats: Mapping[str, str]) -> None:
    """Remember the status of store files whose bytes were just found to match their names."""
    if not stats:
        return
    with ws.writing() as s:
        remember_checked(s, stats)


def remember_checked(session: Any, stats: Mapping[str, str]) -> None:
    """:func:`record_checked` in the caller's transaction."""
    hashes = sorted(stats)
    for start in range(0, len(hashes), CHUNK):
        session.execute(delete(StoreCheck).where(col(StoreCheck.sha256).in_(hashes[start : start + CHUNK])))
    session.add_all(StoreCheck(sha256=sha, stat=stats[sha]) for sha in hashes)
