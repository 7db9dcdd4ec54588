"""Copying the candidates' media while the gates run, so that a build's largest cost starts first.

A build used to judge every gate, then snapshot the released items, then copy (and hash) their media: on a
rebuild the media copy is most of the work, and it waited for everything per item before it. The prefetch
copies the media of every admitted candidate into a staging folder beside the destination as soon as the
statuses are derived; the build then moves the staged files of the items it releases into its own folder
and copies only what is not staged. Every file is still copied once, and hashed as ``StoreChecks`` decides.

Nothing the build decides changes: the snapshot, the gates and every check run as before, and a staged file
is used only when its hash is the one the snapshot names. A file the prefetch could not copy, or whose
bytes do not match its name, is not staged, so the build copies it itself and reports it as it always did.
Nothing is prefetched for a rebuild of a published version whose candidates' data differ from it (the
build refuses that before copying any medium), or when the destination's parent folder does not exist yet.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO

from curation.errors import CurateError
from curation.workspace import Workspace

from . import file_copy
from .snapshot import MediaFile, Snapshot, shipped_media, take_snapshot
from .writer import FileEntry, ReleaseWriter, StoreChecks, jsonl_bytes

DataCheck = Callable[[bytes], None]
Job = tuple[str, Path, str]
"""(path in the release, store file, expected SHA-256): what ``ReleaseWriter.copy_media`` copies."""


class MediaPrefetch:
    """Copies the candidates' media into ``.<name>.tmp-media-<token>`` beside the destination, in a thread.

    The folder carries a held lock file like a build's own temporary folder, so another build's cleanup
    leaves it alone while this build lives and removes it if this build is killed.
    """

    def __init__(
        self,
        ws: Workspace,
        target: Path,
        check: DataCheck,
        candidates: Sequence[str],
        checks: StoreChecks,
        copy_first: bool = False,
    ) -> None:
        self.checks = checks
        token = uuid.uuid4().hex[:12]
        self.folder = target.parent / f".{target.name}.tmp-media-{token}"
        self._lock_path = target.parent / f".{target.name}.tmp-media-{token}.lock"
        self._lock: IO[str] | None = None
        self._stop = threading.Event()
        self._children: list[subprocess.Popen[bytes]] = []
        """The copy processes staging the media (``exports.file_copy``): a build that ends early kills them."""
        self._staged: dict[str, FileEntry] = {}
        self._snapshot: Snapshot | None = None
        self._snapshot_taken = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(ws, check, list(candidates), copy_first), name="media-prefetch", daemon=True
        )

    @classmethod
    def start(
        cls,
        ws: Workspace,
        target: Path,
        check: DataCheck,
        candidates: Sequence[str],
        checks: StoreChecks,
        copy_first: bool = False,
    ) -> MediaPrefetch | None:
        """A running prefetch, or ``None`` where the destination's parent folder does not exist yet.

        ``check`` is given the candidates' ``data/items.jsonl``; when it raises, nothing is copied (a rebuild
        of a published version with other data is refused before any medium is copied). With ``copy_first``
        (a new version: there is no published data to check) the copying starts before the snapshot is taken."""
        if not target.parent.is_dir():
            return None
        prefetch = cls(ws, target, check, candidates, checks, copy_first)
        try:
            prefetch._lock = prefetch._lock_path.open("a")
            fcntl.flock(prefetch._lock, fcntl.LOCK_EX)
        except OSError:
            prefetch.close()
            return None
        prefetch._thread.start()
        return prefetch

    def _run(self, ws: Workspace, check: DataCheck, candidates: list[str], copy_first: bool) -> None:
        with ThreadPoolExecutor(1) as background:
            copying: Future[None] | None = None
            try:
                if copy_first:  # the copy is a rebuild's longest step: it starts before the snapshot is read
                    copying = background.submit(self._stage, ws, shipped_media(ws, candidates))
                try:
                    snapshot = take_snapshot(ws, candidates)
                finally:
                    self._snapshot_taken.set()
                self._snapshot = snapshot
                check(jsonl_bytes(snapshot.items))
            except (CurateError, OSError):
                self._stop.set()  # the build itself takes the snapshot again and reports what is wrong
                return
            if copying is None:
                self._stage(ws, snapshot.media)
            else:
                copying.result()

    def _stage(self, ws: Workspace, media: list[MediaFile]) -> None:
        """Copy the media into the staging folder: in copy processes when they are large (``exports.file_copy``:
        this build's own thread runs Python meanwhile), else in threads, as ``ReleaseWriter`` copies."""
        if self._stop.is_set():
            return
        large = sum(m.asset.size_bytes or 0 for m in media) >= file_copy.PROCESS_BYTES
        if large and (self._stage_in_processes(ws, media) or self._stop.is_set()):
            return
        with ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
            for entry in pool.map(lambda one: self._copy(ws, one), media):
                if entry is not None:
                    self._staged[entry.path] = entry

    def _stage_in_processes(self, ws: Workspace, media: list[MediaFile]) -> bool:
        """Copy the media in one process per core; False when the processes could not run (nothing staged)."""
        targets = [self.folder / m.path for m in media]
        try:
            for folder in sorted({t.parent for t in targets}):
                folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return False  # the threads try each file and leave what they cannot copy to the build
        jobs = self.checks.jobs(
            (ws.asset_path(m.asset), t, m.asset.sha256) for m, t in zip(media, targets, strict=True)
        )
        results = file_copy.copy_in_processes(jobs, max(1, min(2, os.cpu_count() or 1)), self._children)
        if results is None or self._stop.is_set():
            return False
        for one, target, copied in zip(media, targets, results, strict=True):
            if isinstance(copied, str) or copied[0] != one.asset.sha256:
                target.unlink(missing_ok=True)  # the build copies it again and reports the error
                continue
            self.checks.count(one.asset.sha256, copied)
            self._staged[one.path] = FileEntry(one.path, copied[0], copied[1])
        return True

    def _copy(self, ws: Workspace, media: MediaFile) -> FileEntry | None:
        if self._stop.is_set():
            return None
        relative, expected = media.path, media.asset.sha256
        staged = self.folder / relative
        try:
            staged.parent.mkdir(parents=True, exist_ok=True)
            sha, size = self.checks.copy(ws.asset_path(media.asset), staged, expected)
        except (CurateError, OSError):
            staged.unlink(missing_ok=True)  # the build copies it again and reports the error
            return None
        if sha != expected:
            staged.unlink(missing_ok=True)
            return None
        return FileEntry(relative, sha, size)

    def snapshot_of(self, released: Sequence[str]) -> Snapshot | None:
        """The candidates' snapshot this prefetch took, when the build releases exactly those items (no gate
        dropped one): the build need not read them again; None otherwise."""
        self._snapshot_taken.wait()
        snapshot = self._snapshot
        if snapshot is None or [item["id"] for item in snapshot.items] != sorted(set(released)):
            return None
        return snapshot

    def adopt(self, writer: ReleaseWriter, jobs: Sequence[Job]) -> list[Job]:
        """Wait for the prefetch, move the staged files the build wants into its folder, and return the jobs
        left to copy."""
        self._thread.join()
        remaining: list[Job] = []
        for job in jobs:
            relative, _, expected = job
            entry = self._staged.get(relative)
            if entry is None or entry.sha256 != expected:
                remaining.append(job)
                continue
            os.rename(self.folder / relative, writer.target(relative))
            writer.add_entry(entry)
        return remaining

    def close(self) -> None:
        """Stop copying, wait for the thread, and remove the staging folder and its lock."""
        self._stop.set()
        for child in list(self._children):
            if child.poll() is None:
                child.kill()  # a build that ends early does not wait for its staging copies
        if self._thread.is_alive():
            self._thread.join()
        shutil.rmtree(self.folder, ignore_errors=True)
        self._lock_path.unlink(missing_ok=True)
        if self._lock is not None:
            self._lock.close()
