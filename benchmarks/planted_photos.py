"""A folder of photo-like JPEGs with planted near-duplicates, and imagededup's PHash run on it (when installed).

Originals are 1024x768 JPEGs (quality 90) of a smooth colour field with shapes and sensor-like noise (about
150 KB each, as a normalized photo). For each of seven kinds of change, ``per_kind`` originals get a changed copy:
re-encoded at quality 45, halved, recoloured, cropped by 3 % or 8 % of each dimension (off centre), rotated by 2
or 4 degrees. Imported by ``audit_neardup.py --photos``.
"""

from __future__ import annotations

import json
import resource
import sys
import types
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance

KINDS = ("requality", "resized", "recoloured", "crop3", "crop8", "rotate2", "rotate4")
SIZE = (1024, 768)
_NOISE = np.random.default_rng(0).integers(-8, 9, (SIZE[1] + 64, SIZE[0] + 64, 3)).astype(np.int16)


def photo(seed: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    w, h = SIZE
    base = Image.fromarray((rng.random((6, 8, 3)) * 255).astype(np.uint8)).resize(SIZE, Image.Resampling.BICUBIC)
    draw = ImageDraw.Draw(base)
    for _ in range(14):
        x0, y0, s = int(rng.integers(0, w)), int(rng.integers(0, h)), int(rng.integers(30, 260))
        colour = tuple(int(v) for v in rng.integers(0, 256, 3))
        box = [x0, y0, x0 + s, y0 + int(s * rng.uniform(0.5, 1.5))]
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=colour)
    dx, dy = (int(v) for v in rng.integers(0, 64, 2))
    pixels = np.asarray(base, dtype=np.int16) + _NOISE[dy : dy + h, dx : dx + w]
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def _changed(im: Image.Image, kind: str, rng: np.random.Generator) -> tuple[Image.Image, int]:
    """The changed copy and its JPEG quality."""
    w, h = im.size
    if kind == "requality":
        return im, 45
    if kind == "resized":
        return im.resize((w // 2, h // 2), Image.Resampling.BILINEAR), 85
    if kind == "recoloured":
        return ImageEnhance.Color(ImageEnhance.Brightness(im).enhance(1.12)).enhance(0.8), 90
    if kind.startswith("crop"):
        cut = int(kind.removeprefix("crop")) / 100
        left, top = rng.uniform(0, cut * w), rng.uniform(0, cut * h)
        return im.crop((int(left), int(top), int(left + (1 - cut) * w), int(top + (1 - cut) * h))), 90
    angle = float(kind.removeprefix("rotate")) * (1 if rng.random() < 0.5 else -1)
    return im.rotate(angle, Image.Resampling.BICUBIC), 90


def planted_folder(folder: Path, originals: int, per_kind: int) -> list[tuple[str, str, str]]:
    """Write (or reuse) the set in ``folder`` (the JPEGs alone: imagededup reads every file there) and its
    manifest beside it; the planted pairs ``(original, copy, kind)``."""
    manifest = folder.with_suffix(".json")
    if manifest.exists() and json.loads(manifest.read_text())["size"] == [originals, per_kind]:
        return [tuple(p) for p in json.loads(manifest.read_text())["pairs"]]  # type: ignore[misc]
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.jpg"):
        old.unlink()
    rng = np.random.default_rng(11)
    sources = rng.choice(originals, min(originals, per_kind * len(KINDS)), replace=False).tolist()
    for i in range(originals):
        photo(i).save(folder / f"o{i:05d}.jpg", quality=90)
    pairs = []
    for k, kind in enumerate(KINDS):
        for source in sources[k * per_kind : (k + 1) * per_kind]:
            im, quality = _changed(photo(source), kind, rng)
            im.save(folder / f"v{kind}_{source:05d}.jpg", quality=quality)
            pairs.append((f"o{source:05d}.jpg", f"v{kind}_{source:05d}.jpg", kind))
    manifest.write_text(json.dumps({"size": [originals, per_kind], "pairs": pairs}))
    return pairs


def cpu_with_children() -> float:
    """CPU seconds of this process and its waited-for children (imagededup hashes in a worker pool)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def imagededup_phash() -> type | None:
    """imagededup's PHash class, or None when imagededup is not installed. Its package imports its CNN
    module, and that torchvision; where torchvision does not import (a build for another torch), that module
    is replaced by a stub: the hashing methods use none of it."""
    try:
        from imagededup.methods import PHash

        return PHash  # type: ignore[no-any-return]
    except ModuleNotFoundError:
        return None
    except (RuntimeError, ImportError):
        for name in [m for m in sys.modules if m.startswith(("imagededup", "torchvision"))]:
            del sys.modules[name]
        stub = types.ModuleType("imagededup.utils.models")
        stub.CustomModel = stub.MobilenetV3 = object  # type: ignore[attr-defined]
        stub.DEFAULT_MODEL_NAME = "stubbed"  # type: ignore[attr-defined]
        sys.modules["imagededup.utils.models"] = stub
        from imagededup.methods import PHash

        return PHash  # type: ignore[no-any-return]
