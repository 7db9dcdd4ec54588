"""Images: decode safely, normalize to RGB JPEG (quality 90, longest edge <= 1024 px, no metadata), check.

Orientation is applied before the EXIF block is dropped (otherwise a phone photo turns sideways), and
every metadata segment goes (GPS position, camera serials, thumbnails, comments, XMP).
"""

from __future__ import annotations

import hashlib
import io
import warnings
from functools import cache
from typing import TYPE_CHECKING, Any

from curation.config import MediaSettings
from curation.errors import MediaError
from curation.media import PIL_HARD_LIMIT, bomb_problem, quiet_pillow

from .common import NormalizedMedia, _Findings, guard_size

if TYPE_CHECKING:
    from PIL import Image

_ALLOWED_JPEG_MARKERS = {0xE0, 0xDB, 0xC0, 0xC4, 0xDD, 0xDA}
"""APP0 (JFIF), DQT, SOF0 (baseline), DHT, DRI, SOS: what a clean encoder writes and nothing else."""
_METADATA_MARKERS = set(range(0xE1, 0xF0)) | {0xFE}
"""APP1-APP15 (EXIF, XMP, ICC, Photoshop ...) and COM."""


def _open(data: bytes, name: str, settings: MediaSettings | None) -> Image.Image:
    """The opened (not yet decoded) image; ``settings`` None applies no size or pixel limit but Pillow's own."""
    from PIL import Image, UnidentifiedImageError

    guard_size(data, name, settings)
    quiet_pillow()
    try:
        im = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise MediaError(bomb_problem(exc, name, settings.max_image_pixels if settings else PIL_HARD_LIMIT)) from exc
    except (UnidentifiedImageError, OSError) as exc:
        raise MediaError(f"{name}: not a readable image ({exc}); export it as JPEG or PNG") from exc
    width, height = im.size
    if settings is not None and (problem := pixels_problem(width, height, name, settings)):
        raise MediaError(problem)
    return im


def pixels_problem(width: int, height: int, name: str, settings: MediaSettings) -> str | None:
    if width * height > settings.max_image_pixels:
        return (
            f"{name}: {width}x{height} pixels is over the limit of {settings.max_image_pixels:,} "
            "(media.max_image_pixels; a possible decompression bomb); downscale it first"
        )
    return None


def decode_image(data: bytes, name: str, settings: MediaSettings | None) -> Image.Image:
    """The upright RGB picture: EXIF orientation applied, alpha flattened onto white, fully decoded."""
    return _decoded(_open(data, name, settings), name, None)


def decode_reduced(data: bytes, name: str, settings: MediaSettings | None, min_edge: int) -> Image.Image:
    """The upright RGB picture as :func:`decode_image` makes it, at a size whose shorter edge is at least
    ``min_edge`` (or the picture's own): a JPEG is decoded at 1/2, 1/4 or 1/8 scale by the decoder itself
    (its DCT scaling: every coefficient is still read, so a corrupt scan is still refused), other formats
    are decoded and box-reduced. Nothing at full resolution is copied."""
    return _decoded(_open(data, name, settings), name, min_edge)


def _decoded(im: Image.Image, name: str, min_edge: int | None) -> Image.Image:
    from PIL import Image, ImageOps

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            if min_edge is not None and im.format == "JPEG":
                im.draft(im.mode, (min_edge, min_edge))
            icc = im.info.get("icc_profile")
            im.load()
            if min_edge is not None and (factor := min(im.size) // min_edge) > 1:
                im = im.reduce(factor)  # keeps ``info``: the EXIF orientation below still applies
            return _to_srgb(ImageOps.exif_transpose(im), icc)
    except (OSError, ValueError, SyntaxError) as exc:
        raise MediaError(f"{name}: the image data is corrupt ({exc}); export it again") from exc


def _to_srgb(im: Image.Image, icc: bytes | None) -> Image.Image:
    """RGB without alpha; an embedded colour profile is converted to sRGB rather than dropped."""
    from PIL import Image, ImageCms

    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        im = im.point(lambda v: v / 256).convert("L")
    has_alpha = im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info)
    if has_alpha:
        rgba = im.convert("RGBA")
        flat = Image.new("RGB", rgba.size, (255, 255, 255))
        flat.paste(rgba, mask=rgba.getchannel("A"))
        im = flat
    if icc and im.mode in ("RGB", "CMYK"):
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            converted = ImageCms.profileToProfile(im, source, ImageCms.createProfile("sRGB"), outputMode="RGB")
            im = converted if converted is not None else im  # None only when converting in place
        except (ImageCms.PyCMSError, OSError):
            pass  # an unreadable profile: the pixels are taken as sRGB, as a browser would
    rgb = im.convert("RGB")
    # A fresh image carries no ``info``: nothing of the source's metadata can reach the encoder.
    return Image.frombytes("RGB", rgb.size, rgb.tobytes())


@cache
def _reference_quantization(quality: int) -> tuple[tuple[int, ...], ...]:
    """The quantization tables Pillow writes at ``quality`` (to recognise our own output)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (16, 16)).save(buf, "JPEG", quality=quality)
    with Image.open(buf) as im:
        return tuple(tuple(t) for _, t in sorted(im.quantization.items()))  # type: ignore[attr-defined]  # JPEG only


def _jpeg_markers(data: bytes) -> list[int] | None:
    """The segment markers up to the scan, or None when the bytes are not a well-formed JPEG."""
    if not data.startswith(b"\xff\xd8") or not data.rstrip(b"\x00").endswith(b"\xff\xd9"):
        return None
    markers, pos = [], 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        markers.append(marker)
        if marker == 0xDA:
            return markers
        pos += 2 + length
    return None


_PIXEL_NEUTRAL_MARKERS = (_METADATA_MARKERS - {0xE2, 0xEE}) | {0xE0}
"""Segments that leave a JPEG's pixels as they are: JFIF (APP0), EXIF and XMP (APP1: the orientation is
hashed on its own), comments and the other APPn. A colour profile (APP2) and Adobe's colour transform
(APP14) change them."""


def jpeg_picture_sha256(data: bytes) -> str | None:
    """SHA-256 of what decides a JPEG's upright pixels without decoding them: its tables, frame header and
    scan data (every segment but :data:`_PIXEL_NEUTRAL_MARKERS`) and its EXIF orientation. Equal for a
    JPEG and its copy with metadata stripped or rewritten; None when the bytes are not a well-formed JPEG."""
    from PIL import Image

    if _jpeg_markers(data) is None:
        return None
    digest = hashlib.sha256()
    pos = 2
    while True:  # _jpeg_markers checked the segment chain up to the scan
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker == 0xDA:
            digest.update(memoryview(data)[pos:])
            break
        end = pos + 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
        if marker not in _PIXEL_NEUTRAL_MARKERS:
            digest.update(memoryview(data)[pos:end])
        pos = end
    try:
        with Image.open(io.BytesIO(data)) as im:
            orientation = _orientation(im) or 1
    except (OSError, ValueError, SyntaxError):
        return None
    digest.update(f"orientation={orientation}".encode())
    return digest.hexdigest()


def quantization(im: Image.Image) -> tuple[tuple[int, ...], ...]:
    """A JPEG's quantization tables in table order (empty for other formats)."""
    return tuple(tuple(t) for _, t in sorted(getattr(im, "quantization", {}).items()))


def _jpeg_problems(data: bytes, im: Image.Image, settings: MediaSettings) -> _Findings:
    return jpeg_problems(im.format, im.mode, _jpeg_markers(data), quantization(im), settings)


def jpeg_problems(
    fmt: str | None,
    mode: str,
    markers: list[int] | None,
    quant: tuple[tuple[int, ...], ...],
    settings: MediaSettings,
) -> _Findings:
    """How an opened image misses the JPEG the spec asks for, from its format, mode, segments and tables."""
    findings = _Findings()
    if fmt != "JPEG" or markers is None:
        findings.add("format", f"{fmt or 'unknown'} image, expected a baseline JPEG")
        return findings
    if mode != "RGB":
        findings.add("format", f"JPEG in {mode} mode, expected RGB")
    if metadata := sorted({m for m in markers if m in _METADATA_MARKERS}):
        findings.add(
            "metadata",
            "metadata segments " + ", ".join(f"0x{m:02X}" for m in metadata) + " (EXIF, XMP, ICC or comments)",
        )
    if any(m not in _ALLOWED_JPEG_MARKERS | _METADATA_MARKERS for m in markers):
        findings.add("format", "not a baseline JPEG (progressive or unusual segments)")
    if quant != _reference_quantization(settings.image_quality):
        findings.add("format", f"JPEG quality differs from {settings.image_quality}")
    return findings


def normalize_image(data: bytes, name: str, settings: MediaSettings) -> NormalizedMedia:
    """RGB JPEG at the configured quality, longest edge capped, all metadata stripped.

    Idempotent: a file that already conforms (our own output does) is returned unchanged, byte for byte.
    """
    from PIL import Image

    im = _open(data, name, settings)
    width, height = im.size
    conforming = not _jpeg_problems(data, im, settings).result().reasons
    if max(width, height) <= settings.image_max_edge and conforming:
        decode_image(data, name, settings)  # a truncated scan must still be refused
        kept = {
            "transform": "image_normalize",
            "quality": settings.image_quality,
            "max_edge": settings.image_max_edge,
            "width": width,
            "height": height,
            "resized": False,
        }
        return NormalizedMedia(data, "jpg", "image/jpeg", kept, unchanged=True)
    rgb = decode_image(data, name, settings)
    source_size = rgb.size
    longest = max(rgb.size)
    if longest > settings.image_max_edge:
        scale = settings.image_max_edge / longest
        target = (max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale)))
        rgb = rgb.resize(target, Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    rgb.save(buf, "JPEG", quality=settings.image_quality, optimize=False, progressive=False)
    params: dict[str, Any] = {
        "transform": "image_normalize",
        "quality": settings.image_quality,
        "max_edge": settings.image_max_edge,
        "source": {"format": im.format, "mode": im.mode, "width": width, "height": height},
        "oriented": source_size != (width, height) or _orientation(im) not in (None, 1),
        "width": rgb.width,
        "height": rgb.height,
        "resized": rgb.size != source_size,
        "resample": "lanczos",
        "metadata": "stripped",
    }
    return NormalizedMedia(buf.getvalue(), "jpg", "image/jpeg", params, unchanged=False)


def _orientation(im: Image.Image) -> int | None:
    try:
        return im.getexif().get(0x0112)
    except (OSError, ValueError, SyntaxError):
        return None
