"""The content-addressed media store and the checks every incoming file passes.

Files are named by the SHA-256 of their bytes (``media/ab/abcd....wav``) and stored once.
New files are staged per writer and moved into place only when the database transaction commits;
staging left by a killed writer is rolled forward (referenced) or discarded (unreferenced) on the
next open, so an interrupted import leaves the store as it was.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import os
import re
import shutil
import stat
import uuid
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .errors import MediaError
from .jsonl import kind_problem

IMAGE_TYPES = {"JPEG": ("image/jpeg", ".jpg"), "PNG": ("image/png", ".png"), "WEBP": ("image/webp", ".webp")}
AUDIO_TYPES = {
    "WAV": ("audio/wav", ".wav"),
    "FLAC": ("audio/flac", ".flac"),
    "OGG": ("audio/ogg", ".ogg"),
    "MP3": ("audio/mpeg", ".mp3"),
}


@dataclass(frozen=True)
class MediaInfo:
    """What the store records about a file after decoding it."""

    sha256: str
    kind: str
    mime: str
    ext: str
    size_bytes: int
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None
    sample_rate: int | None = None
    channels: int | None = None

    def asset_columns(self, original_name: str) -> dict[str, Any]:
        """The ``asset`` row's columns this file decides: every import of media writes its rows from them."""
        return {f: getattr(self, f) for f in _INFO_FIELDS} | {"original_name": original_name}


_INFO_FIELDS = tuple(f.name for f in dataclasses.fields(MediaInfo))
"""(``dataclasses.asdict`` deep-copies every value: a tenth of a 10k-item import's own time)"""


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def copy_hashing(source: BinaryIO, target: Path, chunk: int = 1 << 20) -> tuple[str, int]:
    """Copy an open file to ``target``, hashing the very bytes written; returns (sha256, size)."""
    digest = hashlib.sha256()
    size = 0
    with target.open("wb") as out:
        while block := source.read(chunk):
            digest.update(block)
            out.write(block)
            size += len(block)
    return digest.hexdigest(), size


PIL_HARD_LIMIT = 2 * 89_478_485
"""Pixels beyond which Pillow refuses to open an image at all (twice its ``MAX_IMAGE_PIXELS``)."""
RESCALE = "scale it down (the release keeps at most 1024 px on the longest edge) and add it again"


def _megapixels(pixels: int) -> str:
    return f"{pixels / 1e6:,.4g} megapixels"


def pixels_problem(width: int, height: int, name: str, max_pixels: int) -> str | None:
    """Why an image of this size is refused before it is decoded (a possible decompression bomb), or None."""
    if width * height <= max_pixels:
        return None
    return (
        f"{name}: the image is {width:,} × {height:,} pixels ({_megapixels(width * height)}), more than the "
        f"{_megapixels(max_pixels)} allowed ([media] max_image_pixels; a possible decompression bomb); {RESCALE}"
    )


def open_image(source: Path | BinaryIO, name: str, max_pixels: int) -> Any:
    """The image opened from its header alone, refused (:class:`MediaError`, naming the file and its size) when
    it has more than ``max_pixels`` pixels, before a single pixel is decoded: every image from outside the
    workspace is opened here. Pillow's own bomb warning is silenced once for the process (this limit, checked at
    every door, is the one that speaks); its hard refusal becomes the same MediaError."""
    from PIL import Image, UnidentifiedImageError

    quiet_pillow()
    try:
        img = Image.open(source)
    except Image.DecompressionBombError as exc:
        size = _declared_size(source)
        if size is not None and (problem := pixels_problem(*size, name, min(max_pixels, PIL_HARD_LIMIT))):
            raise MediaError(problem) from exc
        raise MediaError(bomb_problem(exc, name, max_pixels)) from exc
    except UnidentifiedImageError as exc:
        raise MediaError(
            f"{name}: not a readable image (no JPEG, PNG or WebP picture in it); add the image file"
        ) from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise MediaError(f"{name}: the image is corrupt or truncated; export it again") from exc
    width, height = img.size
    if problem := pixels_problem(width, height, name, max_pixels):
        img.close()
        raise MediaError(problem)
    return img


def _declared_size(source: Path | BinaryIO) -> tuple[int, int] | None:
    """The width and height a PNG, JPEG or WebP header declares, read by the format's own Pillow class (which,
    unlike ``Image.open``, does not refuse a size it finds too large); None when none of them reads it."""
    from PIL import JpegImagePlugin, PngImagePlugin, WebPImagePlugin

    for kind in (PngImagePlugin.PngImageFile, JpegImagePlugin.JpegImageFile, WebPImagePlugin.WebPImageFile):
        try:
            if not isinstance(source, Path):
                source.seek(0)
            with kind(source) as img:
                return int(img.size[0]), int(img.size[1])
        except Exception:  # noqa: BLE001 - any format that does not read it: the next is tried
            continue
    return None


def bomb_problem(exc: Exception, name: str, max_pixels: int = PIL_HARD_LIMIT) -> str:
    """Pillow's own refusal of an image (``DecompressionBombError``) in the user's words."""
    found = re.search(r"\((\d+) pixels\)", str(exc))
    size = _megapixels(int(found.group(1))) if found else f"more than {_megapixels(PIL_HARD_LIMIT)}"
    return (
        f"{name}: the image is {size}, more than the {_megapixels(min(max_pixels, PIL_HARD_LIMIT))} allowed "
        f"([media] max_image_pixels; a possible decompression bomb); {RESCALE}"
    )


def quiet_pillow() -> None:
    """Silence Pillow's ``DecompressionBombWarning`` for the process (again, if a ``catch_warnings`` block that
    installed the filter has since restored the filters): :func:`open_image`'s limit is the one that speaks."""
    from PIL import Image

    bomb = Image.DecompressionBombWarning
    if not any(f[0] == "ignore" and f[2] is bomb for f in warnings.filters):
        warnings.filterwarnings("ignore", category=bomb)


def inspect_image(path: Path, sha256: str, max_pixels: int, name: str | None = None) -> MediaInfo:
    """Decode the whole image, once its header is within ``max_pixels``; refuse non-images, unsupported
    formats and decompression bombs.

    Messages name the file as the person gave it and never a server path (an upload is staged under one).
    """
    name = name or path.name
    with open_image(path, name, max_pixels) as img:
        fmt = img.format or ""
        width, height = img.size
        try:
            img.load()
        except (OSError, SyntaxError, ValueError) as exc:
            raise MediaError(f"{name}: the image is corrupt or truncated; export it again") from exc
    if fmt not in IMAGE_TYPES:
        raise MediaError(f"{name}: image format {fmt or 'unknown'} is not supported; use JPEG, PNG or WebP")
    mime, ext = IMAGE_TYPES[fmt]
    return MediaInfo(sha256, "image", mime, ext, path.stat().st_size, width=width, height=height)


def audio_length_problem(frames: int, rate: int, name: str, max_seconds: float) -> str | None:
    """Why a recording of ``frames`` samples at ``rate`` is refused before it is decoded, or None."""
    if rate <= 0 or frames / rate <= max_seconds:
        return None
    return (
        f"{name}: the recording is {frames / rate:,.1f} s long, more than the {max_seconds:,g} s allowed "
        "([media] max_audio_seconds; a possible decompression bomb); trim it and add it again"
    )


def inspect_audio(path: Path, sha256: str, name: str | None = None, max_seconds: float | None = None) -> MediaInfo:
    """Decode the whole clip; refuse undecodable, truncated or empty audio, and (``max_seconds``) a clip whose
    header says it is longer, before decoding it; no more than that is ever decoded, whatever the header says."""
    import soundfile as sf

    name = name or path.name
    try:
        with sf.SoundFile(str(path)) as info:  # one open for the header and the whole decode
            limit = -1
            if max_seconds is not None:
                if problem := audio_length_problem(info.frames, info.samplerate, name, max_seconds):
                    raise MediaError(problem)
                limit = int(max_seconds * max(info.samplerate, 1)) + 1
            data = info.read(frames=limit, dtype="int16", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError, ValueError) as exc:
        detail = getattr(exc, "error_string", None) or "not a WAV, FLAC, OGG or MP3 recording, or damaged"
        raise MediaError(f"{name}: not decodable audio ({detail}); export it again as WAV or FLAC") from exc
    if max_seconds is not None and (problem := audio_length_problem(data.shape[0], info.samplerate, name, max_seconds)):
        raise MediaError(problem)  # more samples than its header declared
    if info.format not in AUDIO_TYPES:
        raise MediaError(f"{name}: audio format {info.format} is not supported; use WAV, FLAC, OGG or MP3")
    if data.shape[0] == 0 or info.samplerate <= 0:
        raise MediaError(f"{name}: audio has no samples")
    declared = _wav_declared_bytes(path) if info.format == "WAV" else None
    if (declared is not None and declared > path.stat().st_size) or (info.frames > 0 and data.shape[0] < info.frames):
        raise MediaError(
            f"{name}: audio is truncated (the file ends before the length its header declares); export or copy it again"
        )
    mime, ext = AUDIO_TYPES[info.format]
    return MediaInfo(
        sha256,
        "audio",
        mime,
        ext,
        path.stat().st_size,
        duration_s=round(data.shape[0] / info.samplerate, 4),
        sample_rate=info.samplerate,
        channels=info.channels,
    )


def _wav_declared_bytes(path: Path) -> int | None:
    """The file size a RIFF/WAVE header promises up to the end of its ``data`` chunk (None if unreadable)."""
    with path.open("rb") as fh:
        header = fh.read(12)
        if len(header) < 12 or header[:4] != b"RIFF" or header[8:12] != b"WAVE":
            return None
        offset = 12
        while chunk := fh.read(8):
            if len(chunk) < 8:
                return None
            size = int.from_bytes(chunk[4:8], "little")
            if chunk[:4] == b"data":
                return offset + 8 + size
            offset += 8 + size + (size & 1)
            fh.seek(offset)
    return None


def safe_media_path(base: Path, relative: str) -> Path:
    """Resolve a media path from a JSONL line, refusing anything that escapes the JSONL's folder."""
    return MediaPaths(base).resolve(relative)


class MediaPaths:
    """Media paths of one JSONL file, resolved as ``safe_media_path`` does; many files in a few folders cost one
    directory listing per folder (``LISTED_FROM`` files or more), not a ``stat`` per file."""

    LISTED_FROM = 64
    """A folder is listed once it has been asked for this many files (fewer cost less one by one)."""

    def __init__(self, base: Path) -> None:
        self.base = str(base)
        self.inside = str(base.resolve()).rstrip("/") + "/"
        self.folders: dict[str, str] = {}
        self.asked: dict[str, int] = {}
        self.listed: dict[str, dict[str, os.DirEntry[str]]] = {}

    def resolve(self, relative: str) -> Path:
        if not relative or os.path.isabs(relative) or relative.startswith(("/", "\\")):
            raise MediaError(f"{relative}: media paths must be relative to the JSONL file's folder")
        folder, name = os.path.split(relative)
        try:
            if name in ("", ".", ".."):
                raise FileNotFoundError  # resolved whole below
            real = self.folders.get(folder)
            if real is None:
                real = self.folders[folder] = os.path.realpath(os.path.join(self.base, folder))
            candidate = os.path.join(real, name)
            entry = self._entry(real, name)
            if entry is not None and not entry.is_symlink():
                mode = stat.S_IFDIR if entry.is_dir(follow_symlinks=False) else 0
                mode = stat.S_IFREG if entry.is_file(follow_symlinks=False) else mode
                mode = mode or entry.stat(follow_symlinks=False).st_mode  # a FIFO, a device: named as such
            else:
                mode = os.lstat(candidate).st_mode
                if stat.S_ISLNK(mode):
                    candidate = os.path.realpath(candidate)
                    mode = os.stat(candidate).st_mode
        except OSError:  # missing (or a link to nowhere, or an odd name): what Path.resolve() makes of it
            candidate = os.path.realpath(os.path.join(self.base, relative))
            try:
                mode = os.stat(candidate).st_mode
            except OSError:
                mode = 0
        if not (candidate + "/").startswith(self.inside):
            raise MediaError(f"{relative}: path leaves the JSONL file's folder (through '..' or a symlink)")
        if stat.S_ISDIR(mode):
            raise MediaError(f"{relative}: is a folder, not a media file")
        if not stat.S_ISREG(mode):
            raise MediaError(f"{relative}: {kind_problem(mode) if mode else 'file not found'}")
        return Path(candidate)

    def _entry(self, folder: str, name: str) -> os.DirEntry[str] | None:
        """The folder's listing entry for ``name`` once the folder is listed (None: ask the file itself)."""
        listing = self.listed.get(folder)
        if listing is None:
            asked = self.asked[folder] = self.asked.get(folder, 0) + 1
            if asked < self.LISTED_FROM:
                return None
            try:
                with os.scandir(folder) as entries:
                    listing = self.listed[folder] = {e.name: e for e in entries}
            except OSError:
                listing = self.listed[folder] = {}
        return listing.get(name)


class MediaStore:
    """Blobs named by content hash under ``root``."""

    STAGING = ".staging"

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str, ext: str) -> Path:
        return self.root / sha256[:2] / f"{sha256}{ext}"

    def has(self, sha256: str, ext: str) -> bool:
        return self.path(sha256, ext).is_file()

    def stage(self) -> Staging:
        return Staging(self)

    def recover(self, referenced: Iterable[tuple[str, str]]) -> None:
        """Roll forward staged blobs that the database references; drop the rest of dead writers' staging.

        A writer's ``<id>.lock`` appears already locked and before its folder ``<id>/``, so a folder (or lock
        file) whose lock can be taken belongs to a writer that died.
        """
        staging_root = self.root / self.STAGING
        if not staging_root.is_dir():
            return
        wanted = {f"{sha}{ext}" for sha, ext in referenced}
        folders = {p.name for p in staging_root.iterdir() if p.is_dir()}
        stray_locks = [p.with_suffix("") for p in staging_root.glob("*.lock") if p.stem not in folders]
        for folder in [staging_root / name for name in sorted(folders)] + stray_locks:
            lock_path = folder.with_name(folder.name + ".lock")
            try:
                fh = lock_path.open("a")
            except OSError:
                continue
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                continue  # its writer is alive
            try:
                if folder.is_dir():
                    for blob in folder.iterdir():
                        if blob.name in wanted:
                            target = self.path(blob.stem, blob.suffix)
                            target.parent.mkdir(parents=True, exist_ok=True)
                            os.replace(blob, target)
                    shutil.rmtree(folder, ignore_errors=True)
                lock_path.unlink(missing_ok=True)
            finally:
                fh.close()


def intake_copy(source: Path, staged: Path, expected_sha256: str) -> Path:
    """Copy ``source`` to ``staged``, hashing the bytes copied; refuse it (:class:`MediaError`) when the copy
    does not hash to ``expected_sha256`` or the source changed while it was copied (see ``Staging.intake``)."""
    if copy_unchanged(source, staged) != expected_sha256:
        staged.unlink(missing_ok=True)
        raise MediaError(_changed_while_read(source))
    return staged


def copy_unchanged(source: Path, staged: Path) -> str:
    """Copy ``source`` to ``staged`` and return the hash of the bytes copied: one read of a file that is new to
    the store. Refused (:class:`MediaError`) when the source changed while it was copied."""
    with source.open("rb") as src:
        before = os.fstat(src.fileno())
        sha256, size = copy_hashing(src, staged)
        after = os.fstat(src.fileno())
    if not (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns) == (size, after.st_mtime_ns):
        staged.unlink(missing_ok=True)
        raise MediaError(_changed_while_read(source))
    return sha256


def _changed_while_read(source: Path) -> str:
    return f"{source.name}: the file changed while it was being imported; import again once nothing is writing to it"


def name_staged(store: MediaStore, staged: Path, sha256: str, ext: str) -> Path | None:
    """Name an intake copy by its hash in its staging folder (see ``Staging.adopt``), or drop it when the store
    has that file already (None)."""
    if store.has(sha256, ext):
        staged.unlink(missing_ok=True)
        return None
    target = staged.with_name(f"{sha256}{ext}")
    os.replace(staged, target)
    return target


class Staging:
    """New blobs of one write transaction, held in a locked folder until commit."""

    def __init__(self, store: MediaStore) -> None:
        self.store = store
        root = store.root / MediaStore.STAGING
        root.mkdir(parents=True, exist_ok=True)
        name = uuid.uuid4().hex
        # The lock file is locked under a private name and renamed into place, and the folder is made after
        # that: recovery never finds a live writer's lock file unlocked, nor its folder without a held lock.
        locking = root / f"{name}.locking"
        self._lock = locking.open("a")
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self._lock_path = root / f"{name}.lock"
        os.replace(locking, self._lock_path)
        self.folder = root / name
        self.folder.mkdir()
        self.pending: dict[str, Path] = {}
        self._incoming = 0

    def intake(self, source: Path, expected_sha256: str) -> Path:
        """Copy ``source`` into this staging folder, hashing the bytes copied, and return the private copy.

        The copy must hash to ``expected_sha256`` (what validation saw) and the source must not change while it
        is copied; otherwise the file is refused. Decoding and storing then use the copy, so a file's name in
        the store is always its content's hash and its asset row describes it.
        """
        return intake_copy(source, self.reserve(), expected_sha256)

    def reserve(self) -> Path:
        """A fresh name in this staging folder for an intake copy (made here, or by a worker process)."""
        self._incoming += 1
        return self.folder / f"incoming-{self._incoming}"

    def keep(self, staged: Path, sha256: str, ext: str) -> None:
        """Name an intake copy by its hash, to be moved into the store at commit."""
        if f"{sha256}{ext}" in self.pending:
            staged.unlink(missing_ok=True)
            return
        named = name_staged(self.store, staged, sha256, ext)
        if named is not None:
            self.adopt(named)

    def adopt(self, named: Path) -> None:
        """Move a copy already named in this folder (by ``name_staged``, in a worker process) into the store at
        commit; copies of the same content share that name."""
        self.pending.setdefault(named.name, named)

    def add_bytes(self, data: bytes, sha256: str, ext: str) -> None:
        key = f"{sha256}{ext}"
        if key in self.pending or self.store.has(sha256, ext):
            return
        staged = self.folder / key
        staged.write_bytes(data)
        self.pending[key] = staged

    def commit(self) -> None:
        made: set[Path] = set()
        for key, staged in self.pending.items():
            target = self.store.path(key[:64], key[64:])
            if target.parent not in made:  # at most 256 folders: one mkdir each, not one per file
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            os.replace(staged, target)
        self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        self._lock_path.unlink(missing_ok=True)
        self._lock.close()
