"""An import measures a clip's facts and its audit signature from one decode (issue 47); what it stores must be
what the two measurements made apart store: the media gate's facts and the audit's own signature. The loudness
itself is computed without pyloudnorm's per-block Python loop and must equal pyloudnorm's, value for value."""

from __future__ import annotations

import io

import numpy as np
import pyloudnorm
import pytest
import soundfile as sf

from curation.audit.audio import audio_signature
from curation.audit.intake import measure_new
from curation.config import MediaSettings
from curation.errors import MediaError
from curation.mediatools.audio import integrated_loudness
from curation.mediatools.facts import measure

SETTINGS = MediaSettings()
SHORT_LIMIT = MediaSettings(audio_max_seconds=2.0)
"""A limit that the longer clips below exceed: the signature is refused, the facts are still measured."""


def wav(seconds: float, rate: int = 16000, channels: int = 1, subtype: str = "PCM_16", seed: int | None = 0) -> bytes:
    """Noise shaped like phrases and pauses (``seed`` None: digital silence)."""
    frames = int(seconds * rate)
    speech = np.zeros((frames, channels))
    if seed is not None:
        noise = np.random.default_rng(seed).standard_normal((frames, channels))
        speech = noise * 0.1 * np.sin(np.arange(frames) / rate * 2.5)[:, None] ** 2
    buf = io.BytesIO()
    sf.write(buf, speech.astype(np.float32), rate, subtype=subtype, format="WAV")
    return buf.getvalue()


def apart(data: bytes, name: str, settings: MediaSettings) -> tuple[dict, dict | None]:
    """The facts and the signature as the media gate and the audit measure them, each decoding the clip."""
    try:
        signature = audio_signature(data, name, settings).to_dict()
    except MediaError:
        signature = None
    return measure("audio", data, name), signature


CLIPS = {
    "5 s, 16 kHz (chromaprint)": wav(5.0),
    "8 s, 48 kHz stereo": wav(8.0, 48000, 2, seed=1),
    "1 s (no chromaprint)": wav(1.0, seed=2),
    "0.3 s (no loudness)": wav(0.3, seed=3),
    "3.5 s, 44.1 kHz float": wav(3.5, 44100, subtype="FLOAT", seed=4),
    "4 s of silence": wav(4.0, seed=None),
    "not audio": b"RIFF\x00\x00\x00\x00WAVEnothing here",
    "empty": b"",
    "5 s cut to 3.7 s (the header says 5 s)": wav(5.0, seed=5)[:-40000],
}


@pytest.mark.parametrize("settings", [SETTINGS, SHORT_LIMIT], ids=["default limits", "2 s limit"])
@pytest.mark.parametrize("label", sorted(CLIPS))
def test_one_decode_stores_what_two_decodes_store(label: str, settings: MediaSettings) -> None:
    data = CLIPS[label]
    measured = measure_new("audio", data, f"{label}.wav", settings)
    assert measured is not None
    facts, signature = apart(data, f"{label}.wav", settings)
    assert measured.facts == facts
    assert measured.signature == signature


def test_the_limit_refuses_a_long_clip_signature_but_not_its_facts() -> None:
    measured = measure_new("audio", CLIPS["5 s, 16 kHz (chromaprint)"], "long.wav", SHORT_LIMIT)
    assert measured is not None and measured.signature is None
    assert measured.facts["lufs"] is not None


@pytest.mark.parametrize("rate", [8000, 16000, 44100, 48000])
@pytest.mark.parametrize("seconds", [0.4, 0.73, 2.0, 6.1])
def test_loudness_is_pyloudnorms_value_for_value(rate: int, seconds: float) -> None:
    rng = np.random.default_rng(rate + int(seconds * 100))
    signal = rng.standard_normal(int(seconds * rate)) * 0.05
    signal[: len(signal) // 3] *= 1e-4  # a quiet stretch the gates drop
    with np.errstate(divide="ignore"):
        expected = float(pyloudnorm.Meter(rate).integrated_loudness(signal))
    assert integrated_loudness(signal, rate) == expected


def test_silence_has_no_loudness_as_with_pyloudnorm() -> None:
    assert integrated_loudness(np.zeros(16000), 16000) == float("-inf")
