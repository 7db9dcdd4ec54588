"""Image signatures: an exact key (the coded picture, or the decoded pixels) and 64-bit perceptual hashes.

Every hash is taken from one decode at reduced size (a JPEG decoded at 1/8, 1/4 or 1/2 scale by the decoder
itself): a 32x32 pHash or a 9x8 dHash needs no more than a picture of :data:`REDUCED_EDGE` pixels, and a full
decode with its full-resolution copies cost six times as much (``docs/performance-audit.md``).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from curation.config import MediaSettings
from curation.mediatools import decode_image
from curation.mediatools.image import decode_reduced, jpeg_picture_sha256

if TYPE_CHECKING:
    from PIL import Image

HASH_RADIUS = 7
"""A pair is near-duplicate when its pHashes or its dHashes differ in at most this many of 64 bits.
Re-encoding, resizing and mild recolouring stay within 4 bits; a 3 % crop moves one of the two hashes
by up to 10 but keeps the other within 7; unrelated pictures sit at 16 bits or more."""
REDUCED_EDGE = 64
"""The hashes are taken from the picture reduced until its shorter edge is just above this (a 1024x768 JPEG
is decoded at 128x96)."""
CROP_SCALES = (0.92, 0.84)
"""Besides the whole picture, the pHashes of its centre at these fractions of width and height: a copy cropped
by up to about a fifth, or rotated a few degrees (its corners then lost), still matches one of them within
:data:`HASH_RADIUS` (``benchmarks/audit_neardup.py --photos``: 8 % crops 11 of 30 found by the whole pictures'
hashes alone, 21 of 30 with these)."""


@dataclass(frozen=True)
class ImageSignature:
    pixels_sha256: str
    """Equal for the same picture however stored: for a JPEG, of its coded picture and orientation (what
    decides its pixels, whatever metadata it carries); for other formats, of its width, height and RGB
    pixels after orientation (the same for a PNG and a lossless WebP of one picture)."""
    phash: int
    dhash: int
    crops: tuple[int, ...] = field(default=())
    """pHashes of the centre crops (:data:`CROP_SCALES`); none in a signature stored before they were taken."""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ImageSignature:
        crops = tuple(int(v) for v in data.get("crops", ()))  # type: ignore[attr-defined]
        return cls(str(data["pixels_sha256"]), int(data["phash"]), int(data["dhash"]), crops)  # type: ignore[call-overload]

    def phashes(self) -> tuple[int, ...]:
        """Every pHash of the picture: the whole, then its centre crops."""
        return (self.phash, *self.crops)


def hash_pools(signatures: list[ImageSignature]) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(method, hashes, owner)`` per method: all pHashes (whole and centre crops) in one pool and the
    dHashes in another, with the index of the signature each hash belongs to. Two pictures are near
    duplicates when hashes of one pool, owned by each, are within :data:`HASH_RADIUS`."""
    phashes = [s.phashes() for s in signatures]
    owners = np.repeat(np.arange(len(signatures)), [len(p) for p in phashes])
    flat = np.fromiter((h for p in phashes for h in p), dtype=np.uint64, count=len(owners))
    dhashes = np.fromiter((s.dhash for s in signatures), dtype=np.uint64, count=len(signatures))
    return [("phash", flat, owners), ("dhash", dhashes, np.arange(len(signatures)))]


@cache
def _dct_rows() -> np.ndarray:
    """The first 8 rows of the 32-point DCT-II (SciPy's unnormalized one, as ``imagehash.phash`` takes it)."""
    k, x = np.arange(8)[:, None], np.arange(32)[None, :]
    return 2 * np.cos(np.pi * k * (2 * x + 1) / 64)


_BIT_VALUES = np.left_shift(np.uint64(1), np.arange(63, -1, -1, dtype=np.uint64))
"""Row-major bits, the first the most significant (``imagehash``'s order)."""


def _as_int(bits: np.ndarray) -> int:
    return int(np.bitwise_or.reduce(np.where(bits.ravel(), _BIT_VALUES, np.uint64(0))))


def _phash(gray: Image.Image, box: tuple[float, float, float, float] | None = None) -> int:
    """``imagehash.phash``: the 8x8 lowest frequencies of the 32x32 picture (of ``box``) above their median."""
    from PIL import Image

    pixels = np.asarray(gray.resize((32, 32), Image.Resampling.LANCZOS, box=box), dtype=np.float64)
    rows = _dct_rows()
    low = rows @ pixels @ rows.T  # SciPy's dct down the columns, then along the rows
    return _as_int(low > np.median(low))


def _dhash(gray: Image.Image) -> int:
    """``imagehash.dhash``: whether each pixel of the 9x8 picture is brighter than its right neighbour."""
    from PIL import Image

    pixels = np.asarray(gray.resize((9, 8), Image.Resampling.LANCZOS), dtype=np.int16)
    return _as_int(pixels[:, 1:] > pixels[:, :-1])


def _pixels_sha256(rgb: Image.Image) -> str:
    digest = hashlib.sha256(f"{rgb.width}x{rgb.height}:".encode())
    digest.update(rgb.tobytes())
    return digest.hexdigest()


def image_signature(data: bytes, name: str, settings: MediaSettings) -> ImageSignature:
    """The signature of an image's bytes (a :class:`~curation.errors.MediaError` naming ``name`` when they
    cannot be read). A JPEG is decoded once, at reduced size; another format once, fully (its exact key is of
    its pixels), and reduced from there."""
    exact = jpeg_picture_sha256(data)
    if exact is None:
        full = decode_image(data, name, settings)
        exact = _pixels_sha256(full)
        factor = min(full.size) // REDUCED_EDGE
        reduced = full.reduce(factor) if factor > 1 else full
    else:
        reduced = decode_reduced(data, name, settings, REDUCED_EDGE)
    gray = reduced.convert("L")
    width, height = gray.size
    crops = []
    for scale in CROP_SCALES:
        dx, dy = width * (1 - scale) / 2, height * (1 - scale) / 2
        crops.append(_phash(gray, (dx, dy, width - dx, height - dy)))
    return ImageSignature(exact, _phash(gray), _dhash(gray), tuple(crops))
