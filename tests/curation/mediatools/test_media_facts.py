"""Media facts: measured once without limits, they give the same verdict as a check of the bytes, whatever
the settings; and they are plain JSON (PostgreSQL's JSON has no NaN or Infinity)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from PIL import Image

from curation.config import MediaSettings
from curation.mediatools import MediaCheck, check_audio, check_image, normalize_audio, normalize_image
from curation.mediatools.facts import audio_verdict, image_verdict, measure_audio, measure_image
from tests.synthetic_media import encode_audio, encode_image, phrase, scene

DEFAULT = MediaSettings()
SETTINGS = [
    DEFAULT,
    MediaSettings(audio_lufs=-16.0, audio_true_peak_dbtp=-3.0, audio_min_seconds=3.0, audio_max_seconds=2.0),
    MediaSettings(audio_sample_rate=44100, audio_channels=2, image_quality=80, image_max_edge=300),
    MediaSettings(max_file_mb=0.01, max_image_pixels=1000),
]
"""The defaults, stricter loudness and duration, other formats, tiny size limits."""


def _clips() -> dict[str, bytes]:
    rate = 48000
    clipped = phrase(5, 2.0, rate, 0.3)
    clipped[1000:1010] = 1.0
    return {
        "normalized.wav": normalize_audio(encode_audio(phrase(1, 3.0, 22050), 22050), "n.wav", DEFAULT).data,
        "quiet.wav": encode_audio(phrase(2, 3.0, rate, 0.01), rate),
        "stereo.flac": encode_audio(np.stack([phrase(3, 4.0, 44100), phrase(4, 4.0, 44100)], axis=1), 44100, "FLAC"),
        "clipped.wav": encode_audio(clipped, rate),
        "silent.wav": encode_audio(np.zeros(rate), rate),
        "short.wav": encode_audio(phrase(6, 0.3, rate), rate),
        "empty.wav": b"",
        "garbage.wav": b"RIFF not really a wave file",
        "truncated.wav": encode_audio(phrase(7, 2.0, rate), rate)[:5000],
    }


def _images() -> dict[str, bytes]:
    normalized = normalize_image(encode_image(scene(1), "PNG"), "n.png", DEFAULT).data
    return {
        "normalized.jpg": normalized,
        "photo.png": encode_image(scene(2, (300, 200)), "PNG"),
        "large.jpg": encode_image(scene(3, (1600, 1200)), "JPEG", quality=90),
        "progressive.jpg": encode_image(scene(4, (200, 150)), "JPEG", quality=90, progressive=True),
        "grey.jpg": encode_image(scene(5, (200, 150)).convert("L"), "JPEG", quality=90),
        "truncated.jpg": normalized[: len(normalized) // 2],
        "empty.jpg": b"",
        "garbage.jpg": b"\xff\xd8 not an image",
        "tiny.png": encode_image(Image.new("RGBA", (8, 8), (255, 0, 0, 128)), "PNG"),
    }


def _same(a: MediaCheck, b: MediaCheck) -> bool:
    """Equal codes and details (libsndfile names the in-memory file by its address, which varies)."""

    def plain(check: MediaCheck) -> dict[str, str]:
        return {code: re.sub(r" at 0x[0-9a-f]+", "", detail) for code, detail in check.details.items()}

    return a.reasons == b.reasons and plain(a) == plain(b)


CLIPS = _clips()
IMAGES = _images()


@pytest.mark.parametrize("name", sorted(CLIPS))
def test_audio_facts_give_the_checks_verdict_under_any_settings(name: str) -> None:
    data = CLIPS[name]
    facts = measure_audio(data, name)
    assert json.loads(json.dumps(facts, allow_nan=False)) == facts
    for settings in SETTINGS:
        assert _same(audio_verdict(facts, name, settings), check_audio(data, name, settings)), settings


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_image_facts_give_the_checks_verdict_under_any_settings(name: str) -> None:
    data = IMAGES[name]
    facts = measure_image(data, name)
    assert json.loads(json.dumps(facts, allow_nan=False)) == facts
    for settings in SETTINGS:
        assert _same(image_verdict(facts, name, settings), check_image(data, name, settings)), settings


def test_the_fixtures_cover_passing_and_failing_media() -> None:
    """The comparisons above are worth something only if the verdicts differ among the fixtures."""
    audio = {code for name, data in CLIPS.items() for code in check_audio(data, name, DEFAULT).reasons}
    images = {code for name, data in IMAGES.items() for code in check_image(data, name, DEFAULT).reasons}
    assert not check_audio(CLIPS["normalized.wav"], "n.wav", DEFAULT).reasons
    assert not check_image(IMAGES["normalized.jpg"], "n.jpg", DEFAULT).reasons
    assert {"media:loudness", "media:clipping", "media:silence", "media:duration", "media:format"} <= audio
    assert {"media:size", "media:format"} <= images


def test_an_untrusted_upload_over_the_limits_is_not_decoded() -> None:
    """With the settings as bounds the measurement stops where the verdict does (no decode of a big file)."""
    tiny = MediaSettings(max_file_mb=0.001)
    bounded = measure_audio(CLIPS["quiet.wav"], "q.wav", tiny)
    assert bounded == {"size": len(CLIPS["quiet.wav"])}
    assert "lufs" in measure_audio(CLIPS["quiet.wav"], "q.wav")
    assert set(measure_image(IMAGES["large.jpg"], "l.jpg", MediaSettings(max_image_pixels=100))) == {
        "size",
        "unopenable",
    }
