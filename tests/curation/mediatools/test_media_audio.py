"""Audio normalization: spec conformity, loudness checked by an independent meter, idempotence, refusals."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from curation.config import MediaSettings
from curation.errors import MediaError
from curation.mediatools import check_audio, normalize_audio, probe_audio, true_peak_dbtp
from tests.conftest import require_tool
from tests.synthetic_media import encode_audio, phrase

SETTINGS = MediaSettings()


def ebur128(path: Path) -> tuple[float, float]:
    """Integrated loudness (LUFS) and true peak (dBTP) measured by ffmpeg's ebur128 filter."""
    require_tool("ffmpeg")  # the independent meter
    result = subprocess.run(
        ["ffmpeg", "-hide_banner", "-nostats", "-i", str(path), "-af", "ebur128=peak=true", "-f", "null", "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = result.stderr[result.stderr.rindex("Summary:") :]
    lufs = float(re.search(r"I:\s+(-?[\d.]+) LUFS", summary).group(1))  # type: ignore[union-attr]
    peak = float(re.search(r"Peak:\s+(-?[\d.]+) dBFS", summary).group(1))  # type: ignore[union-attr]
    return lufs, peak


def stereo_flac(seconds: float = 4.0, rate: int = 44100, level: float = 0.5) -> bytes:
    left = phrase(1, seconds, rate, level)
    right = 0.6 * phrase(2, seconds, rate, level)
    return encode_audio(np.stack([left, right], axis=1), rate, "FLAC")


@pytest.mark.parametrize(
    ("source", "name"),
    [
        (stereo_flac(), "loud_stereo.flac"),
        (encode_audio(phrase(3, 3.0, 16000, 0.02), 16000), "quiet_16k.wav"),
        (encode_audio(phrase(4, 2.5, 48000, 0.3), 48000, "OGG", "VORBIS"), "speech.ogg"),
    ],
)
def test_normalized_audio_meets_spec_by_an_independent_meter(tmp_path: Path, source: bytes, name: str) -> None:
    result = normalize_audio(source, name, SETTINGS)
    info = sf.info(io.BytesIO(result.data))
    assert (info.format, info.subtype, info.samplerate, info.channels) == ("WAV", "PCM_16", 48000, 1)
    path = tmp_path / "out.wav"
    path.write_bytes(result.data)
    lufs, peak = ebur128(path)
    assert abs(lufs - SETTINGS.audio_lufs) <= 0.5, (name, lufs)
    assert peak <= SETTINGS.audio_true_peak_dbtp + 0.1
    assert check_audio(result.data, name, SETTINGS).reasons == []
    assert result.params["source"]["format"] in ("FLAC", "WAV", "OGG")
    assert not result.unchanged


def test_true_peak_guard_limits_gain_on_peaky_audio(tmp_path: Path) -> None:
    rate = 48000
    signal = np.zeros(rate * 3)
    signal[::4800] = 0.9  # sparse clicks: very quiet overall, very high peaks
    signal += 0.0005 * np.random.default_rng(0).normal(size=signal.size)
    result = normalize_audio(encode_audio(signal, rate), "clicks.wav", SETTINGS)
    assert result.params["peak_limited"] is True
    assert result.params["output_lufs"] < SETTINGS.audio_lufs - 0.5
    path = tmp_path / "clicks_norm.wav"
    path.write_bytes(result.data)
    _, peak = ebur128(path)
    assert peak <= SETTINGS.audio_true_peak_dbtp + 0.1
    decoded, _ = sf.read(io.BytesIO(result.data))
    assert true_peak_dbtp(decoded, rate) <= SETTINGS.audio_true_peak_dbtp + 0.05
    assert check_audio(result.data, "clicks_norm.wav", SETTINGS).reasons == []  # peak-limited is conforming


@pytest.mark.parametrize("source", [stereo_flac(), encode_audio(np.sign(phrase(5, 2.0, 48000)) * 0.01, 48000)])
def test_normalizing_twice_returns_identical_bytes(source: bytes) -> None:
    once = normalize_audio(source, "clip", SETTINGS)
    twice = normalize_audio(once.data, "clip", SETTINGS)
    assert twice.data == once.data
    assert twice.unchanged


def test_sister_clips_are_level_matched() -> None:
    quiet = normalize_audio(encode_audio(phrase(7, 3.0, 48000, 0.01), 48000), "quiet.wav", SETTINGS)
    loud = normalize_audio(encode_audio(phrase(7, 3.0, 48000, 0.9), 48000), "loud.wav", SETTINGS)
    assert abs(quiet.params["output_lufs"] - loud.params["output_lufs"]) < 0.1


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "empty"),
        (b"RIFF\x00\x00\x00\x00WAVEfmt garbage that is not audio", "not a readable audio file"),
        (encode_audio(np.zeros(48000), 48000), "silent"),
        (encode_audio(phrase(1, 0.2, 16000), 16000), "too short"),
    ],
)
def test_bad_audio_is_refused_naming_the_file(data: bytes, fragment: str) -> None:
    with pytest.raises(MediaError, match=fragment) as caught:
        normalize_audio(data, "take_07.wav", SETTINGS)
    assert "take_07.wav" in str(caught.value)
    assert " object at 0x" not in str(caught.value)  # the same words on every run (they are stored as a fact)


def test_oversized_and_overlong_audio_is_refused() -> None:
    small = SETTINGS.model_copy(update={"max_file_mb": 0.01})
    with pytest.raises(MediaError, match=r"big\.wav: the file is .* over the limit"):
        normalize_audio(encode_audio(phrase(1, 1.0, 48000), 48000), "big.wav", small)
    short_limit = SETTINGS.model_copy(update={"audio_max_seconds": 1.0})
    with pytest.raises(MediaError, match=r"long\.wav: .* longer than the limit"):
        normalize_audio(encode_audio(phrase(1, 2.0, 16000), 16000), "long.wav", short_limit)


def test_check_reports_each_problem() -> None:
    rate = 48000
    t = np.arange(rate * 2) / rate
    clipped = np.clip(1.5 * np.sin(2 * np.pi * 200 * t), -1, 1)
    assert "media:clipping" in check_audio(encode_audio(clipped, rate), "c.wav", SETTINGS).reasons
    assert check_audio(encode_audio(np.zeros(rate), rate), "s.wav", SETTINGS).reasons == ["media:silence"]
    assert "media:duration" in check_audio(encode_audio(phrase(1, 0.3, rate), rate), "d.wav", SETTINGS).reasons
    stereo = check_audio(stereo_flac(), "x.flac", SETTINGS).reasons
    assert stereo == ["media:format", "media:sample_rate", "media:channels", "media:loudness"]
    assert check_audio(b"", "e.wav", SETTINGS).reasons == ["media:format"]
    tiny = SETTINGS.model_copy(update={"max_file_mb": 0.001})
    assert check_audio(stereo_flac(), "x.flac", tiny).reasons == ["media:size"]


def test_probe_derivative_is_16k_mono_float() -> None:
    samples = probe_audio(stereo_flac(seconds=2.0), "x.flac", SETTINGS)
    assert samples.dtype == np.float32
    assert samples.ndim == 1
    assert abs(len(samples) - 32000) <= 1
