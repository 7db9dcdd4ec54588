"""Writing release files so that each is hashed exactly once, while it is written.

Generated files are serialized in memory, hashed and written; media are copied from the store and hashed block
by block in parallel (hashlib and the copies release the GIL), and each digest is checked against the store's
content address, so a corrupt store is caught at no extra read. A store file whose file status is the one it
had when its bytes last matched its name is copied without hashing (``StoreChecks``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.errors import MediaError
from curation.jsonl import dumps_line
from curation.store_checks import checked_files, record_checked
from curation.workspace import Workspace

from .file_copy import CHUNK, Copied, CopyJob, copy_checked, copy_hashing, copy_plain

__all__ = [
    "CHUNK",
    "FileEntry",
    "ReleaseWriter",
    "StoreChecks",
    "canonical_json",
    "copy_hashing",
    "copy_plain",
    "copies_clone",
    "jsonl_bytes",
]


@dataclass(frozen=True)
class FileEntry:
    path: str
    sha256: str
    size: int


def canonical_json(document: Any) -> bytes:
    """Sorted keys, two-space indent, UTF-8, trailing newline: the same document always gives the same bytes."""
    return (json.dumps(document, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode("utf-8")


def jsonl_bytes(records: Iterable[Any]) -> bytes:
    """One compact, key-sorted record per line; line-break-like characters in text are escaped."""
    return b"".join(dumps_line(r, sort_keys=True, compact=True).encode("utf-8") + b"\n" for r in records)


FICLONE = 0x40049409
"""Linux's ioctl that makes one file share another's blocks until either is written (XFS with reflink, Btrfs)."""


def copies_clone(folder: Path) -> bool | None:
    """Whether copying a file within ``folder``'s file system clones it (shares its blocks, copy-on-write)
    instead of writing its bytes again; None when ``folder`` cannot be written to find out.

    Where it does, the ``copy_file_range`` a build copies media with clones them, so a rebuild's media copy
    costs neither the writing nor the space (on ext4 it writes every byte: about as much as hashing them, or
    several times that on a virtual machine; see docs/performance.md). A clone is still a file of its own:
    writing to a release's file never changes the store's."""
    try:
        handle, name = tempfile.mkstemp(prefix=".clone-probe-", dir=folder)
    except OSError:
        return None
    probe = Path(name)
    clone = probe.with_name(probe.name + ".clone")
    try:
        with os.fdopen(handle, "wb") as source:
            source.write(b"\0" * 4096)
            source.flush()
            try:
                with clone.open("wb") as target:
                    fcntl.ioctl(target.fileno(), FICLONE, source.fileno())
            except OSError:
                return False  # EOPNOTSUPP (ext4, tmpfs), ENOTTY, EINVAL, EXDEV: each byte is written
            return True
    finally:
        probe.unlink(missing_ok=True)
        clone.unlink(missing_ok=True)


class StoreChecks:
    """Copies media store files, hashing only those not known to be unchanged since they last matched their
    names (``curation.store_checks``: their file status is the one remembered), and collects the status of
    each file whose hash matched, for the build to remember."""

    def __init__(self, known: dict[str, str]) -> None:
        self.known = known
        self.fresh: dict[str, str] = {}
        self.hashed = 0
        """Files this build hashed (the others' status vouched for their bytes)."""
        self.plain = 0
        """Files this build copied without hashing them."""
        self._lock = threading.Lock()

    @classmethod
    def of(cls, ws: Workspace) -> StoreChecks:
        """The workspace's remembered checks."""
        return cls(checked_files(ws))

    def remember(self, ws: Workspace) -> None:
        """Store the checks this build made (the files it hashed and found matching)."""
        record_checked(ws, self.fresh)

    def copy(self, source: Path, target: Path, expected: str) -> tuple[str, int]:
        """Copy ``source`` to ``target``; (sha256, size), the hash read from the bytes unless they are known."""
        copied = copy_checked(source, target, expected, self.known.get(expected), copy_plain, copy_hashing)
        self.count(expected, copied)
        return copied[0], copied[1]

    def jobs(self, copies: Iterable[tuple[Path, Path, str]]) -> list[CopyJob]:
        """``(source, target, expected)`` copies with each file's known status, for :func:`copy_in_processes`."""
        return [(source, target, expected, self.known.get(expected)) for source, target, expected in copies]

    def count(self, expected: str, copied: Copied) -> None:
        """Note a copy made (here or in a copy process): the files hashed, and the statuses to remember."""
        _, _, hashed, fresh = copied
        with self._lock:
            self.plain += not hashed
            self.hashed += hashed
            if fresh is not None:
                self.fresh[expected] = fresh


class ReleaseWriter:
    """Collects the sha256 and size of every file it writes under ``root``."""

    def __init__(self, root: Path, workers: int | None = None, checks: StoreChecks | None = None) -> None:
        self.root = root
        self.checks = checks
        self.files: dict[str, FileEntry] = {}
        self._lock = threading.Lock()
        self.workers = workers or max(1, min(4, os.cpu_count() or 1))
        self._folders: set[Path] = set()
        """Folders made under the root: each is made once, not once per file (a system call per medium is a
        trip through the interpreter lock while the build's own thread runs Python)."""

    def _target(self, relative: str) -> Path:
        target = self.root / relative
        folder = target.parent
        if folder not in self._folders:
            folder.mkdir(parents=True, exist_ok=True)
            self._folders.add(folder)
        return target

    def target(self, relative: str) -> Path:
        """Where ``relative`` goes under the root, its folder made (for a file placed by another writer)."""
        return self._target(relative)

    def add_entry(self, entry: FileEntry) -> None:
        """Record a file placed under the root by another writer, which hashed it as it copied it."""
        with self._lock:
            self.files[entry.path] = entry

    def write_bytes(self, relative: str, data: bytes) -> FileEntry:
        self._target(relative).write_bytes(data)
        entry = FileEntry(relative, hashlib.sha256(data).hexdigest(), len(data))
        with self._lock:
            self.files[relative] = entry
        return entry

    def write_json(self, relative: str, document: Any) -> FileEntry:
        return self.write_bytes(relative, canonical_json(document))

    def copy_media(self, copies: Iterable[tuple[str, Path, str]]) -> None:
        """Copy ``(relative, source, expected_sha256)`` triples; refuse a store file whose bytes changed."""
        jobs = list(copies)
        for relative, _, _ in jobs:
            self._target(relative)

        def one(job: tuple[str, Path, str]) -> FileEntry:
            relative, source, expected = job
            target = self.root / relative
            sha, size = self.checks.copy(source, target, expected) if self.checks else copy_hashing(source, target)
            if sha != expected:
                raise MediaError(
                    f"{source}: the media store file should have SHA-256 {expected} but has {sha}; "
                    "the store is corrupt — restore this file from a backup and build again"
                )
            return FileEntry(relative, sha, size)

        with ThreadPoolExecutor(self.workers) as pool:
            for entry in pool.map(one, jobs):
                with self._lock:
                    self.files[entry.path] = entry

    def entries(self) -> list[FileEntry]:
        with self._lock:
            return [self.files[p] for p in sorted(self.files)]
