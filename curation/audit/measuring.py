"""Media facts and audit signatures measured after a large import, in the background, and waited for by gates.

Measuring a medium (loudness with a 4x-oversampled true peak, the decode check, perceptual and spectral
hashes, a Chromaprint fingerprint) takes far longer than hashing and copying it. An import in worker
processes (``curation.workers``: 200 files or more, or 64 MB) therefore stores its media without measuring
them, and `curate import items` starts this module detached (:func:`start_in_background`): it measures every
stored image and audio file that lacks facts or a signature of the current version, one decode for both, in
worker processes, and stores them. While it runs it holds ``.measuring.lock`` in the workspace folder. The
media gate and the audit call :func:`measure_pending` for the files they read, which waits for that lock and
then measures whatever is still missing: a background step that was interrupted, or never started (a library
caller, a reader who builds at once), costs time, never a result. Facts are stored only for a file whose bytes
still hash to its name, as the gates store them. That hash is a store check too (``curation.store_checks``):
the file's status is kept with its facts, so a release build copies the file without hashing it again while
the status stands.

    python -m curation.audit.measuring WORKSPACE_FOLDER
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlmodel import col

from curation.config import MediaSettings
from curation.media import sha256_file
from curation.mediatools.facts import FACTS_VERSIONS
from curation.store_checks import remember_checked, settled, vouched
from curation.tables import Asset
from curation.workers import Runner, file_weight
from curation.workspace import Workspace

from .intake import Measured, measure_new, store_measured
from .tables import HASHES_PER_QUERY as CHUNK
from .tables import SIGNATURE_VERSION, MediaFact, MediaSignature

LOCK_NAME = ".measuring.lock"
LOG_NAME = ".measuring.log"
STORE_BATCH = 500
"""Measurements stored per transaction (each batch is kept if a later one is interrupted)."""

log = logging.getLogger(__name__)
_started: list[subprocess.Popen[bytes]] = []
"""Background steps this process started (kept referenced: they outlive the command that started them)."""


@dataclass(frozen=True)
class _Stored:
    """One store file to measure, as a worker process needs it."""

    sha256: str
    kind: str
    path: Path
    name: str


def pending(ws: Workspace, assets: Iterable[Asset] | None = None) -> list[Asset]:
    """The image and audio assets (of ``assets``, or all) lacking facts or a signature of the current version."""
    with ws.session() as s:
        if assets is None:
            assets = list(s.execute(select(Asset).where(col(Asset.kind).in_(sorted(FACTS_VERSIONS)))).scalars())
        wanted = {a.sha256: a for a in assets if a.kind in FACTS_VERSIONS}
        hashes = sorted(wanted)
        facts: set[str] = set()
        signed: set[str] = set()
        for start in range(0, len(hashes), CHUNK):
            chunk = hashes[start : start + CHUNK]
            rows = s.execute(
                select(col(MediaFact.sha256), col(MediaFact.kind), col(MediaFact.version)).where(
                    col(MediaFact.sha256).in_(chunk)
                )
            )
            facts |= {
                sha for sha, kind, version in rows if kind == wanted[sha].kind and version == FACTS_VERSIONS[kind]
            }
            signed |= set(
                s.execute(
                    select(col(MediaSignature.sha256)).where(
                        col(MediaSignature.sha256).in_(chunk), col(MediaSignature.version) == SIGNATURE_VERSION
                    )
                ).scalars()
            )
    return [wanted[sha] for sha in hashes if sha not in facts or sha not in signed]


def _measure_stored(settings: MediaSettings, job: _Stored) -> tuple[str, Measured | None, str | None]:
    """A store file's facts and signature, and its status as a store check (``curation.store_checks``: its
    bytes were just found to match its name, so a release build need not hash them again); None when it is
    missing or its bytes no longer match its name (the gates judge it as it is, and the release's copy step
    refuses it). Runs in a worker process."""
    try:
        before = os.stat(job.path)
        data = job.path.read_bytes()
    except OSError:
        return job.sha256, None, None
    if hashlib.sha256(data).hexdigest() != job.sha256:
        return job.sha256, None, None
    return job.sha256, measure_new(job.kind, data, job.name, settings), vouched(job.path, before)


def _vouch_settled(sha256: str, path: Path) -> str | None:
    """The status of a file that had not settled when it was measured, where it has now and its bytes still
    match its name (``curation.store_checks``)."""
    try:
        before = os.stat(path)
        if not settled(before):
            return None
        digest = sha256_file(path)
    except OSError:
        return None
    return vouched(path, before) if digest == sha256 else None


@contextmanager
def _measuring(ws: Workspace) -> Iterator[None]:
    """Hold the workspace's measuring lock (waiting for a running background step); without a writable
    workspace folder, go on unlocked (nothing could have started a background step there)."""
    try:
        handle = (ws.root / LOCK_NAME).open("a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def measure_pending(
    ws: Workspace, assets: Iterable[Asset] | None = None, progress: Callable[[int, int], None] | None = None
) -> int:
    """Measure and store what :func:`pending` lists (after a running background step ends); the files measured.

    ``progress(done, total)`` follows the measuring, which many files do in worker processes."""
    with _measuring(ws):
        todo = pending(ws, assets)
        if not todo:
            return 0
        jobs = [_Stored(a.sha256, a.kind, ws.asset_path(a), a.original_name or a.sha256[:12]) for a in todo]
        with Runner(_measure_stored, ws.settings.media, progress, weight=lambda job: file_weight(job.path)) as runner:
            for job in jobs:
                runner.add(job)
            results = [found for found in runner.results() if found[1] is not None]
        # an import names its files in the store as it ends, so those measured first had not settled
        # (``RACY_S``) and could not be vouched for then; by now most have: they are hashed once more
        paths = {job.sha256: job.path for job in jobs}
        results = [(sha, measured, checked or _vouch_settled(sha, paths[sha])) for sha, measured, checked in results]
        for start in range(0, len(results), STORE_BATCH):
            batch = results[start : start + STORE_BATCH]
            with ws.writing() as s:
                store_measured(s, {sha: measured for sha, measured, _ in batch if measured is not None})
                remember_checked(s, {sha: checked for sha, _, checked in batch if checked is not None})
        return len(results)


def start_in_background(ws: Workspace) -> int | None:
    """Start measuring the workspace's pending media in a detached process; its pid, or None when nothing is
    pending. It outlives this command; its messages go to ``.measuring.log`` in the workspace folder."""
    if not pending(ws):
        return None
    with (ws.root / LOG_NAME).open("ab") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "curation.audit.measuring", str(ws.root)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,  # a Ctrl-C in the terminal that ran the import does not stop it
        )
    _started.append(process)
    return process.pid


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if len(argv) != 1:
        print("usage: python -m curation.audit.measuring WORKSPACE_FOLDER", file=sys.stderr)
        return 2
    ws = Workspace.open(Path(argv[0]))
    try:
        measured = measure_pending(ws)
    finally:
        ws.close()
    log.info("measured %d media file(s) in %s", measured, argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
