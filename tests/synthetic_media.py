"""Deterministic synthetic media for audit and normalization tests: scenes and speech-like phrases.

Different seeds give different content with the same statistics, which is what look-alike
non-duplicates need; the same seed transformed (re-encoded, resized, re-levelled) gives planted duplicates.
"""

from __future__ import annotations

import io

import numpy as np
import soundfile as sf
from PIL import Image, ImageDraw


def scene(seed: int, size: tuple[int, int] = (800, 600)) -> Image.Image:
    """A smooth colour field with a dozen random ellipses and rectangles."""
    rng = np.random.default_rng(seed)
    w, h = size
    base = Image.fromarray((rng.random((6, 8, 3)) * 255).astype(np.uint8)).resize(size, Image.Resampling.BICUBIC)
    draw = ImageDraw.Draw(base)
    for _ in range(12):
        x0, y0, s = int(rng.integers(0, w)), int(rng.integers(0, h)), int(rng.integers(30, 200))
        colour = tuple(int(v) for v in rng.integers(0, 256, 3))
        box = [x0, y0, x0 + s, y0 + int(s * rng.uniform(0.5, 1.5))]
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=colour)
    return base


def encode_image(image: Image.Image, fmt: str = "JPEG", **params: object) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt, **params)
    return buf.getvalue()


def phrase(seed: int, seconds: float = 1.5, rate: int = 22050, level: float = 0.3) -> np.ndarray:
    """Speech-like audio: voiced syllables (harmonics under random formants) and noise bursts."""
    rng = np.random.default_rng(seed)
    out = np.zeros(int(seconds * rate))
    pos = int(0.05 * rate)
    while pos < len(out) - int(0.1 * rate):
        length = min(int(rng.uniform(0.08, 0.25) * rate), len(out) - pos)
        t = np.arange(length) / rate
        envelope = np.sin(np.pi * np.arange(length) / length) ** 2
        if rng.random() < 0.75:
            f0 = rng.uniform(100, 240) * (1 + rng.uniform(-0.15, 0.15) * t / t[-1])
            phase = 2 * np.pi * np.cumsum(f0) / rate
            formants = rng.uniform(300, 3000, 3)
            syllable = sum(
                np.sin(k * phase) * sum(np.exp(-((((k * f0.mean()) - f) / 200) ** 2)) for f in formants) / k**0.5
                for k in range(1, 25)
            )
        else:
            syllable = rng.normal(size=length) * 0.3
        out[pos : pos + length] += envelope * syllable
        pos += length + int(rng.uniform(0.02, 0.12) * rate)
    return level * out / np.max(np.abs(out))


def encode_audio(signal: np.ndarray, rate: int, fmt: str = "WAV", subtype: str = "PCM_16") -> bytes:
    buf = io.BytesIO()
    sf.write(buf, signal, rate, format=fmt, subtype=subtype)
    return buf.getvalue()
