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

import os
import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select
from sqlmodel import col

from .tables import StoreCheck
from .workspace import Workspace

CHUNK = 500
"""Hashes per ``IN (...)`` (SQLite limits bound parameters)."""
RACY_S = 2.0
"""A file changed this recently may change again within its timestamps' resolution: its status is not kept."""


def stat_key(st: os.stat_result) -> str:
    """What must stay the same for a file's bytes to be taken as unchanged."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def settled(st: os.stat_result, now: float | None = None) -> bool:
    """Whether the file's last change is old enough that its status can stand for its bytes."""
    return ((now if now is not None else time.time()) - st.st_ctime_ns / 1e9) >= RACY_S


def vouched(path: os.PathLike[str] | str, before: os.stat_result) -> str | None:
    """The status to remember for a file whose bytes, read after ``before`` was taken, matched its name: None
    when the file changed while it was read, or too recently (``RACY_S``)."""
    try:
        after = os.stat(path)
    except OSError:
        return None
    key = stat_key(before)
    return key if stat_key(after) == key and settled(before) else None


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
