"""Image signatures: SHA-256 of decoded pixels (exact) and 64-bit perceptual hashes (near)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass

from curation.config import MediaSettings
from curation.mediatools import decode_image

HASH_RADIUS = 7
"""A pair is near-duplicate when its pHash or its dHash differs in at most this many of 64 bits.
Re-encoding, resizing and mild recolouring stay within 4 bits; a 3 % crop moves one of the two hashes
by up to 10 but keeps the other within 7; unrelated pictures sit at 16 bits or more."""


@dataclass(frozen=True)
class ImageSignature:
    pixels_sha256: str
    """Of width, height and RGB pixels after orientation: equal for the same picture in any container."""
    phash: int
    dhash: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ImageSignature:
        return cls(str(data["pixels_sha256"]), int(data["phash"]), int(data["dhash"]))  # type: ignore[call-overload]


def _as_int(image_hash) -> int:  # type: ignore[no-untyped-def]
    value = 0
    for bit in image_hash.hash.flatten():
        value = (value << 1) | int(bit)
    return value


def image_signature(data: bytes, name: str, settings: MediaSettings) -> ImageSignature:
    import imagehash

    rgb = decode_image(data, name, settings)
    digest = hashlib.sha256(f"{rgb.width}x{rgb.height}:".encode())
    digest.update(rgb.tobytes())
    return ImageSignature(digest.hexdigest(), _as_int(imagehash.phash(rgb)), _as_int(imagehash.dhash(rgb)))
