"""A file's status (device, inode, size, modification and change times), as ``curation.store_checks`` keeps it
for a store file whose bytes matched its name. Standard library only: a release build's copy processes
(``exports.file_copy``) import it without the rest of the project."""

from __future__ import annotations

import os
import time

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
