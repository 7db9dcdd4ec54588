"""Reading an item import's media: each distinct file once, hashed and copied into the import's staging folder,
decoded from that copy, many at once in worker processes that start while the lines are still being read.

``curation.items`` validates the lines and stores them; this is what it asks of every medium a line names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .audit.intake import Measured, measure_new
from .config import MediaSettings
from .errors import MediaError
from .media import (
    MediaInfo,
    MediaStore,
    Staging,
    copy_unchanged,
    inspect_audio,
    inspect_image,
    intake_copy,
    name_staged,
    sha256_file,
)
from .tables import Asset
from .workers import Runner, file_weight, in_worker, run_all
from .workspace import Workspace


@dataclass(frozen=True)
class _Intake:
    """What reading one medium needs, sent once to each worker process: the store and the hashes (with their
    extensions) of the assets it records, and the media limits."""

    store: MediaStore
    known: dict[str, str]
    known_sizes: frozenset[int]
    """The sizes of those assets: a file of another size is new, and is hashed as it is copied (one read)."""
    max_file_mb: float
    max_image_pixels: int
    settings: MediaSettings


@dataclass(frozen=True)
class _Medium:
    """One distinct file of an import, read as the kind it is first wanted as, into ``staged`` if it is new."""

    path: Path
    kind: str
    staged: Path


@dataclass(frozen=True)
class _Measured:
    """What reading a medium found: its hash, and its facts when the store lacks it (``info`` is None for a
    known asset, which its row describes); the intake copy to keep; or the problem that refuses it."""

    sha256: str = ""
    info: MediaInfo | None = None
    staged: Path | None = None
    error: str | None = None
    measured: Measured | None = None
    """A new file's facts and audit signature, measured from the staged copy for the gates to find stored."""


def _measure(intake: _Intake, medium: _Medium) -> _Measured:
    """Hash a file; a file the store lacks is copied into the import's staging folder, hashing the copy, and
    decoded from that private copy: what is validated is exactly what is stored, whatever happens to the
    source. The copy is then named by its hash (``Staging.adopt`` takes it). Runs in a worker process for a
    large import (curation.workers)."""
    path = medium.path
    try:
        size = path.stat().st_size
        new = size not in intake.known_sizes
        if not new:
            sha = sha256_file(path)
            ext = intake.known.get(sha)
            if ext is not None:
                if intake.store.has(sha, ext):
                    return _Measured(sha)
                # the store lost its copy: this import restores it
                staged = intake_copy(path, medium.staged, sha)
                return _Measured(sha, staged=name_staged(intake.store, staged, sha, ext))
        max_bytes = intake.max_file_mb * 1024 * 1024
        if size == 0:
            raise MediaError(f"{path.name}: file is empty")
        if size > max_bytes:
            raise MediaError(
                f"{path.name}: {size / 1e6:.1f} MB exceeds the limit of {intake.max_file_mb:g} MB ([media] max_file_mb)"
            )
        if new:
            staged = medium.staged
            sha = copy_unchanged(path, staged)
        else:
            staged = intake_copy(path, medium.staged, sha)
        if medium.kind == "image":
            info = inspect_image(staged, sha, intake.max_image_pixels, name=path.name)
        else:
            info = inspect_audio(staged, sha, name=path.name, max_seconds=intake.settings.max_audio_seconds)
        # a pooled import leaves measuring to a later step (curation.audit.measuring), which it starts
        measured = None if in_worker() else measure_new(info.kind, staged.read_bytes(), path.name, intake.settings)
        return _Measured(sha, info, name_staged(intake.store, staged, sha, info.ext), measured=measured)
    except MediaError as exc:
        return _Measured(error=str(exc))


class MediaCache:
    """Read each distinct file once per import (sisters share media), many at once in worker processes that
    start while the lines are still being read (use as a context manager: leaving it stops them).

    A file that fails as the kind it was first wanted as is read again as the other kind where a line wants
    it so; :meth:`info` then answers per line as reading the lines one by one would.
    """

    def __init__(
        self, ws: Workspace, known: dict[str, Asset], staging: Staging, progress: Callable[[int, int], None] | None
    ) -> None:
        self.known = known
        self.staging = staging
        self.intake = _Intake(
            ws.media,
            {sha: a.ext for sha, a in known.items()},
            frozenset(a.size_bytes for a in known.values()),
            ws.settings.media.max_file_mb,
            ws.settings.media.max_image_pixels,
            ws.settings.media,
        )
        self.runner: Runner[_Medium, _Measured] = Runner(
            _measure, self.intake, progress, weight=lambda medium: file_weight(medium.path)
        )
        self.first: list[_Medium] = []
        self.kinds: dict[Path, set[str]] = {}
        self.read: dict[tuple[Path, str], MediaInfo | str] = {}
        self.by_path: dict[Path, MediaInfo] = {}
        self.measured: dict[tuple[Path, str], Measured] = {}
        """Per file read as a kind: its facts and signature, when it is new to the workspace."""
        self.deferred = False
        """Whether the import read its media in worker processes and left measuring them to a later step."""

    def __enter__(self) -> MediaCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.runner.close()

    def want(self, path: Path, kind: str) -> None:
        kinds = self.kinds.get(path)
        if kinds is None:
            self.kinds[path] = {kind}
            medium = _Medium(path, kind, self.staging.reserve())
            self.first.append(medium)
            self.runner.add(medium)
        else:
            kinds.add(kind)

    def read_all(self) -> None:
        """Wait for every wanted file as its first kind, then read the failed ones again as their other kind.

        A pooled import measures nothing (``deferred``): what the workspace's own process measured of it (the
        chunks of a worker that died, files read again as another kind) is dropped too, so that a pooled
        import always leaves the same to the measuring step."""
        results = self.runner.results()
        self.deferred = self.runner.pooled  # before the results are taken: a dead pool's chunks ran here
        self._found(self.first, results)
        again = [
            _Medium(m.path, kind, self.staging.reserve())
            for m in self.first
            if isinstance(self.read[m.path, m.kind], str)
            for kind in sorted(self.kinds[m.path] - {m.kind})
        ]
        self._found(again, run_all(_measure, self.intake, again))

    def _found(self, media: list[_Medium], results: list[_Measured]) -> None:
        for medium, found in zip(media, results, strict=True):
            if found.error is not None:
                self.read[medium.path, medium.kind] = found.error
                continue
            if found.info is None:
                asset = self.known[found.sha256]
                info = MediaInfo(
                    found.sha256,
                    asset.kind,
                    asset.mime,
                    asset.ext,
                    asset.size_bytes,
                    asset.width,
                    asset.height,
                    asset.duration_s,
                    asset.sample_rate,
                    asset.channels,
                )
            else:
                info = found.info
            if found.staged is not None:
                self.staging.adopt(found.staged)
            if found.measured is not None and not self.deferred:
                self.measured[medium.path, medium.kind] = found.measured
            self.read[medium.path, medium.kind] = info

    def info(self, path: Path, kind: str) -> MediaInfo:
        """A line's medium, as reading the lines in order with a per-path cache of successes finds it."""
        if path in self.by_path:
            info = self.by_path[path]
        else:
            found = self.read[path, kind]
            if isinstance(found, str):
                raise MediaError(found)
            info = self.by_path[path] = found
        if info.kind != kind:
            raise MediaError(f"{path.name}: is {info.kind}, but the field expects {kind}")
        return info
