"""Audio signatures: SHA-256 of canonical samples (exact), a spectral hash (from 1 s) and chromaprint.

Every clip gets a spectral hash of our own (pure numpy): log band energies on a 8 kHz copy, compared as
signs of differences, which gain cannot change and resampling or lossy coding barely touch. Chromaprint
is an optional accelerator on top of it, for clips of 3 s or more: computed in-process by libchromaprint
when it is installed, else by Debian's ``fpcalc`` (libchromaprint-tools) on the PATH, with the same values
(:mod:`curation.mediatools.chromaprint`); without either the audit runs on the spectral hash alone and
says so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from curation.config import MediaSettings
from curation.mediatools import probe_audio
from curation.mediatools.audio import DecodedAudio, probe_signal, resample
from curation.mediatools.chromaprint import backend as chromaprint_backend
from curation.mediatools.chromaprint import raw_fingerprint

CANONICAL_RATE = 16000
"""Exact audio keys hash int16 mono samples at this rate."""
ANALYSIS_RATE = 8000
FRAME = 256
HOP = 128
BANDS = 17
"""17 log-spaced bands from 150 Hz to 3.8 kHz give 16 band differences, one 16-bit word per frame."""
SEGMENTS = 8
COARSE_RADIUS = 7
"""Candidate radius for the 64-bit coarse hash (searched by multi-index hashing)."""
SPECTRAL_MAX_BER = 0.2
"""Frame bit error rate of a verified duplicate. Gain, resampling and FLAC stay under 0.03, OGG and MP3
under 0.17; other phrases in a similar voice reach 0.25 on 1 s clips (few frames, best of 17 shifts)."""
CHROMAPRINT_MIN_SECONDS = 3.0
CHROMAPRINT_MAX_BER = 0.15
"""Re-encoded, resampled or re-levelled copies stay under 0.05; different speech sits above 0.24."""
MAX_SHIFT_FRAMES = 8
FLOOR_DB = 50.0
ACTIVE_DB = 35.0
"""Frames quieter than this below the loudest are pauses: trimmed at the ends, skipped in comparisons."""


@dataclass(frozen=True)
class AudioSignature:
    samples_sha256: str
    duration_s: float
    coarse: int
    """64 bits: 8 time segments x 8 bands, each bit whether the band is above its own median."""
    frames: list[int] = field(repr=False)
    """One 16-bit word per 16 ms frame (Haitsma-Kalker style band/time energy-difference signs)."""
    chromaprint: list[int] | None = field(default=None, repr=False)
    chromaprint_missing: bool = False
    """Long enough for chromaprint, but computed where neither libchromaprint nor fpcalc was installed: a
    cache recomputes it once one is there (:meth:`stale`)."""

    def stale(self) -> bool:
        """Whether a cached copy lacks a chromaprint that this installation can now compute."""
        return self.chromaprint_missing and chromaprint_backend() is not None

    def to_dict(self) -> dict[str, object]:
        return {
            "samples_sha256": self.samples_sha256,
            "duration_s": self.duration_s,
            "coarse": self.coarse,
            "frames": self.frames,
            "chromaprint": self.chromaprint,
            "chromaprint_missing": self.chromaprint_missing,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AudioSignature:
        chroma = data.get("chromaprint")
        return cls(
            str(data["samples_sha256"]),
            float(data["duration_s"]),
            int(data["coarse"]),
            list(data["frames"]),  # ints as to_dict stored them (JSON); no per-word conversion
            None if chroma is None else list(chroma),
            bool(data.get("chromaprint_missing", False)),
        )


def _band_energies(signal: np.ndarray) -> np.ndarray:
    """Log energy per frame and band, shape (frames, BANDS), floored :data:`FLOOR_DB` under the loudest.

    The floor keeps quantization noise in pauses (which any re-encoding changes) out of the signature.
    """
    if len(signal) < FRAME:
        signal = np.pad(signal, (0, FRAME - len(signal)))
    frames = np.lib.stride_tricks.sliding_window_view(signal, FRAME)[::HOP]  # a view: no copy of each frame
    spectrum = np.abs(np.fft.rfft(frames * np.hanning(FRAME), axis=1)) ** 2
    freqs = np.fft.rfftfreq(FRAME, 1.0 / ANALYSIS_RATE)
    edges = np.geomspace(150.0, 3800.0, BANDS + 1)
    pairs = zip(edges[:-1], edges[1:], strict=True)
    bands = np.stack([spectrum[:, (freqs >= lo) & (freqs < hi)].sum(axis=1) for lo, hi in pairs], axis=1)
    floor = max(float(bands.max()), 1e-20) * 10 ** (-FLOOR_DB / 10)
    return np.log(np.maximum(bands, floor))


def _active(energies: np.ndarray) -> np.ndarray:
    """Frames within :data:`ACTIVE_DB` of the loudest frame: the only ones whose bits mean anything."""
    loudness = np.log(np.exp(energies).sum(axis=1))
    return loudness >= loudness.max() - ACTIVE_DB / 10 * np.log(10)


def spectral_fingerprint(signal: np.ndarray, rate: int) -> tuple[int, list[int]]:
    """The 64-bit coarse hash and the per-frame 16-bit words (-1 for a quiet frame) of a mono signal."""
    low = resample(signal.astype(np.float64), rate, ANALYSIS_RATE, quality="HQ")
    energies = _band_energies(low)
    active = np.flatnonzero(_active(energies))
    energies = energies[active[0] : active[-1] + 1]
    active_mask = _active(energies)
    band_diff = energies[:, :-1] - energies[:, 1:]
    bits = (band_diff[1:] - band_diff[:-1]) > 0
    words = (bits.astype(np.int64) << np.arange(BANDS - 1)).sum(axis=1)
    words[~(active_mask[1:] & active_mask[:-1])] = -1
    segments = np.array_split(energies[:, 1 : 1 + SEGMENTS], SEGMENTS, axis=0)
    means = np.stack([seg.mean(axis=0) if len(seg) else np.zeros(SEGMENTS) for seg in segments])
    coarse_bits = (means > np.median(means, axis=0, keepdims=True)).ravel()
    coarse = 0
    for bit in coarse_bits:
        coarse = (coarse << 1) | int(bit)
    return coarse, [int(w) for w in words]


def _bit_error_rate(a: np.ndarray, b: np.ndarray, bits: int, max_shift: int) -> float:
    """Lowest bit error rate over alignments within ``max_shift`` frames; words < 0 (quiet) are skipped.

    An alignment counts only when at least half of the shorter sequence's usable frames overlap.
    """
    best = 1.0
    usable = min(int(np.count_nonzero(a >= 0)), int(np.count_nonzero(b >= 0)))
    if usable == 0:
        return best
    for shift in range(-max_shift, max_shift + 1):
        x, y = (a[shift:], b) if shift >= 0 else (a, b[-shift:])
        n = min(len(x), len(y))
        x, y = x[:n], y[:n]
        valid = (x >= 0) & (y >= 0)
        compared = int(np.count_nonzero(valid))
        if compared < max(1, usable // 2):
            continue
        errors = np.bitwise_count(np.bitwise_xor(x[valid], y[valid])).sum()
        best = min(best, float(errors) / (compared * bits))
    return best


def frame_bit_error_rate(a: AudioSignature, b: AudioSignature) -> float:
    x, y = np.asarray(a.frames, dtype=np.int64), np.asarray(b.frames, dtype=np.int64)
    return _bit_error_rate(x, y, BANDS - 1, MAX_SHIFT_FRAMES)


def chromaprint_bit_error_rate(a: list[int], b: list[int]) -> float:
    x, y = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    return _bit_error_rate(x, y, 32, MAX_SHIFT_FRAMES)


def fingerprint_methods() -> str:
    """Which audio fingerprints this installation computes, as the audit's output names them."""
    found = chromaprint_backend()
    if found is not None:
        return f"audio fingerprints: built-in spectral hash + chromaprint ({found})"
    return (
        "audio fingerprints: built-in spectral hash only (chromaprint skipped: libchromaprint is not installed "
        "and fpcalc is not on the PATH; install libchromaprint-tools to add it)"
    )


def audio_signature(data: bytes, name: str, settings: MediaSettings) -> AudioSignature:
    return signature_of_signal(probe_audio(data, name, settings, sample_rate=CANONICAL_RATE), name)


def decoded_signature(decoded: DecodedAudio, name: str) -> AudioSignature:
    """:func:`audio_signature` of a clip decoded already, within the limits (``mediatools.audio.within_limits``):
    an import measures its facts and its signature from one decode."""
    return signature_of_signal(probe_signal(decoded, CANONICAL_RATE), name)


def signature_of_signal(signal: np.ndarray, name: str) -> AudioSignature:
    """The signature of a mono float32 signal at :data:`CANONICAL_RATE`."""
    pcm16 = np.clip(np.round(signal.astype(np.float64) * 32768.0), -32768, 32767).astype(np.int16)
    digest = hashlib.sha256(pcm16.tobytes()).hexdigest()
    duration = len(signal) / CANONICAL_RATE
    coarse, words = spectral_fingerprint(signal, CANONICAL_RATE)
    long_enough = duration >= CHROMAPRINT_MIN_SECONDS
    chroma = raw_fingerprint(pcm16, CANONICAL_RATE, name) if long_enough else None
    return AudioSignature(
        digest, round(duration, 3), coarse, words, chroma, chromaprint_missing=long_enough and not chroma
    )
