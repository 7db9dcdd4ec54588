"""The in-process chromaprint is fpcalc's, value for value, so the audit's results cannot tell them apart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from curation.audit import AudioSignature, audio_signature
from curation.audit.audio import CANONICAL_RATE, fingerprint_methods
from curation.config import MediaSettings
from curation.mediatools import chromaprint
from curation.mediatools.chromaprint import ChromaprintLibrary
from tests.conftest import missing_tool, require_tool
from tests.synthetic_media import encode_audio, phrase

RATE = CANONICAL_RATE
SETTINGS = MediaSettings()


def _library() -> ChromaprintLibrary:
    library = chromaprint.load_library()
    if library is None:
        missing_tool("libchromaprint cannot be loaded: apt-get install libchromaprint1 (libchromaprint-tools has it)")
    return library


def _pcm(signal: np.ndarray) -> np.ndarray:
    return np.clip(np.round(signal * 32768.0), -32768, 32767).astype(np.int16)


def _clip(kind: str, samples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(samples) / RATE
    if kind == "tone":
        signal = 0.5 * np.sin(2 * np.pi * (220 + 37 * seed) * t)
    elif kind == "tones":  # two tones, one gated twice a second
        signal = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 1234 * t) * (t % 1 < 0.5)
    elif kind == "noise":
        signal = 0.3 * rng.standard_normal(samples)
    elif kind == "chirp":
        signal = 0.4 * np.sin(2 * np.pi * (100 * t + 200 * t * t))
    else:  # speech-like: the audit tests' synthetic phrases
        signal = phrase(seed, samples / RATE + 0.01, RATE)[:samples]
    return _pcm(signal)


CLIPS = [
    ("tone", 3 * RATE, 1),
    ("tones", 10 * RATE, 0),
    ("noise", int(4.37 * RATE), 2),
    ("noise", int(29.99 * RATE), 2),
    ("chirp", int(11.1 * RATE), 1),
    ("chirp", int(29.99 * RATE), 2),
    ("speech", 6 * RATE, 3),
    ("speech", 17 * RATE + 123, 4),
    ("speech", 49526, 5),  # here a flushed resampler would give one value more than fpcalc does
]


@pytest.mark.parametrize(("kind", "samples", "seed"), CLIPS)
def test_library_fingerprint_is_fpcalcs(kind: str, samples: int, seed: int) -> None:
    library = _library()
    require_tool("fpcalc")
    pcm = _clip(kind, samples, seed)
    by_fpcalc = chromaprint.fpcalc_fingerprint(pcm, RATE, "clip.wav")
    assert by_fpcalc  # fpcalc gave a fingerprint to compare with
    assert library.fingerprint(pcm, RATE) == by_fpcalc


def test_a_clip_longer_than_ten_minutes_is_cut_where_fpcalc_cuts_it() -> None:
    library = _library()
    require_tool("fpcalc")
    pcm = _clip("noise", 640 * RATE, 7)
    by_fpcalc = chromaprint.fpcalc_fingerprint(pcm, RATE, "long.wav")
    assert library.fingerprint(pcm, RATE) == by_fpcalc
    assert library.fingerprint(pcm[: 600 * RATE + RATE // 2], RATE) == by_fpcalc  # nothing after 600 s counts
    assert len(library.fingerprint(pcm[: 300 * RATE], RATE)) < len(by_fpcalc)


def test_the_audit_signature_is_the_same_by_either_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    _library()
    require_tool("fpcalc")
    data = encode_audio(phrase(8, 5.0, 22050), 22050)
    assert "chromaprint (libchromaprint)" in fingerprint_methods()
    in_process = audio_signature(data, "a.wav", SETTINGS)
    monkeypatch.setattr(chromaprint, "load_library", lambda: None)
    assert "chromaprint (fpcalc)" in fingerprint_methods()
    by_fpcalc = audio_signature(data, "a.wav", SETTINGS)
    assert in_process.chromaprint and in_process.to_dict() == by_fpcalc.to_dict()


def test_without_both_backends_no_chromaprint_and_either_one_makes_a_cached_signature_stale(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    library = _library()
    data = encode_audio(phrase(4, 4.0, 16000), 16000)
    monkeypatch.setenv("PATH", str(tmp_path))  # no fpcalc on it
    assert chromaprint.backend() == "libchromaprint"
    with_library = audio_signature(data, "long.wav", SETTINGS)
    assert with_library.chromaprint and not with_library.chromaprint_missing
    monkeypatch.setattr(chromaprint, "load_library", lambda: None)
    assert chromaprint.backend() is None and "spectral hash only" in fingerprint_methods()
    bare = audio_signature(data, "long.wav", SETTINGS)
    assert bare.chromaprint is None and bare.chromaprint_missing and not bare.stale()
    assert bare.frames == with_library.frames and bare.coarse == with_library.coarse
    monkeypatch.setattr(chromaprint, "load_library", lambda: library)  # installed since: fpcalc not needed
    assert AudioSignature.from_dict(bare.to_dict()).stale()
