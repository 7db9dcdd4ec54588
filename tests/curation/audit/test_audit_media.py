"""Planted image and audio duplicates are found; look-alikes are not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soxr
from PIL import Image, ImageEnhance

from curation.audit import audio_signature, image_signature
from curation.audit.search import chromaprint_pairs, image_pairs, spectral_pairs
from curation.config import MediaSettings
from curation.errors import MediaError
from tests.conftest import require_tool
from tests.synthetic_media import encode_audio, encode_image, phrase, scene

SETTINGS = MediaSettings()


def image_variants(seed: int) -> dict[str, bytes]:
    original = scene(seed)
    w, h = original.size
    return {
        "original": encode_image(original, "JPEG", quality=92),
        "requality": encode_image(original, "JPEG", quality=40),
        "resized": encode_image(original.resize((w // 3, h // 3)), "PNG"),
        "cropped": encode_image(original.crop((int(w * 0.03), 0, w - int(w * 0.03), h)), "JPEG", quality=85),
        "recoloured": encode_image(
            ImageEnhance.Color(ImageEnhance.Brightness(original).enhance(1.1)).enhance(0.8), "JPEG", quality=90
        ),
    }


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_transformed_images_are_near_duplicates_of_the_original(seed: int) -> None:
    variants = image_variants(seed)
    names = list(variants)
    signatures = [image_signature(data, name, SETTINGS) for name, data in variants.items()]
    linked = {(names[i], names[j]) for i, j, _, _ in image_pairs(signatures)}
    for name in names[1:]:
        assert ("original", name) in linked, name


def test_look_alike_images_are_not_linked() -> None:
    signatures = [image_signature(encode_image(scene(100 + s), "JPEG"), str(s), SETTINGS) for s in range(60)]
    assert image_pairs(signatures) == []


def test_pixel_hash_sees_through_the_container() -> None:
    picture = scene(5, (300, 200))
    png = image_signature(encode_image(picture, "PNG"), "a.png", SETTINGS)
    webp = image_signature(encode_image(picture, "WEBP", lossless=True), "a.webp", SETTINGS)
    jpeg = image_signature(encode_image(picture, "JPEG"), "a.jpg", SETTINGS)
    assert png.pixels_sha256 == webp.pixels_sha256 != jpeg.pixels_sha256


def audio_variants(seed: int, seconds: float) -> dict[str, bytes]:
    rate = 22050
    x = phrase(seed, seconds, rate)
    pcm = np.round(x * 32767).astype(np.int16)
    return {
        "original": encode_audio(pcm, rate),
        "gain": encode_audio(0.2 * x, rate),
        "rate": encode_audio(soxr.resample(x, rate, 48000), 48000),
        "flac": encode_audio(pcm, rate, "FLAC"),
        "ogg": encode_audio(x, rate, "OGG", "VORBIS"),
        "mp3": encode_audio(x, rate, "MP3", "MPEG_LAYER_III"),
    }


@pytest.mark.parametrize(("seed", "seconds"), [(0, 1.0), (1, 1.5), (2, 5.0)])
def test_transformed_audio_is_a_near_duplicate(seed: int, seconds: float) -> None:
    variants = audio_variants(seed, seconds)
    names = list(variants)
    signatures = [audio_signature(data, name, SETTINGS) for name, data in variants.items()]
    linked = {(names[i], names[j]) for i, j, _ in spectral_pairs(signatures)}
    for name in names[1:]:
        assert ("original", name) in linked, name
    if seconds >= 3:
        require_tool("fpcalc")  # the spectral hash above needs nothing; chromaprint needs fpcalc
        assert all(s.chromaprint for s in signatures)
        by_print = {(names[i], names[j]) for i, j, _ in chromaprint_pairs([s.chromaprint for s in signatures])}
        assert {("original", name) for name in names[1:]} <= by_print
    else:
        assert all(s.chromaprint is None for s in signatures)
    assert signatures[0].samples_sha256 == signatures[3].samples_sha256  # WAV and FLAC: same samples


@pytest.mark.parametrize("seconds", [1.0, 4.0])
def test_look_alike_phrases_are_not_linked(seconds: float) -> None:
    signatures = [
        audio_signature(encode_audio(phrase(50 + s, seconds, 16000), 16000), str(s), SETTINGS) for s in range(24)
    ]
    assert spectral_pairs(signatures) == []
    assert chromaprint_pairs([s.chromaprint for s in signatures]) == []


def test_signatures_round_trip_through_json() -> None:
    import json

    from curation.audit import AudioSignature, ImageSignature

    a = audio_signature(encode_audio(phrase(9, 3.5, 16000), 16000), "a.wav", SETTINGS)
    assert AudioSignature.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    i = image_signature(encode_image(scene(9, (200, 100)), "PNG"), "i.png", SETTINGS)
    assert ImageSignature.from_dict(json.loads(json.dumps(i.to_dict()))) == i


def test_unreadable_media_is_refused_naming_the_file() -> None:
    with pytest.raises(MediaError, match="broken.wav"):
        audio_signature(b"not audio at all", "broken.wav", SETTINGS)
    with pytest.raises(MediaError, match="broken.jpg"):
        image_signature(b"\xff\xd8\xff garbage", "broken.jpg", SETTINGS)
    assert np.isfinite(audio_signature(encode_audio(phrase(1, 1.0, 8000), 8000), "ok.wav", SETTINGS).duration_s)


def test_without_fpcalc_a_long_clip_gets_the_spectral_hash_and_is_recomputed_once_fpcalc_is_there(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from curation.audit import AudioSignature
    from curation.audit.audio import fingerprint_methods

    fpcalc = require_tool("fpcalc")
    data = encode_audio(phrase(4, 4.0, 16000), 16000)
    with_fpcalc = audio_signature(data, "long.wav", SETTINGS)
    monkeypatch.setattr("curation.mediatools.chromaprint.load_library", lambda: None)  # nor libchromaprint
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    assert "spectral hash only" in fingerprint_methods() and "fpcalc is not on the PATH" in fingerprint_methods()
    bare = audio_signature(data, "long.wav", SETTINGS)
    assert bare.chromaprint is None and bare.chromaprint_missing
    assert bare.frames == with_fpcalc.frames and bare.coarse == with_fpcalc.coarse
    assert not bare.stale()  # nothing better can be computed here
    cached = AudioSignature.from_dict(bare.to_dict())
    monkeypatch.setenv("PATH", f"{tmp_path}:{Path(fpcalc).parent}")
    assert cached.stale() and "chromaprint (fpcalc)" in fingerprint_methods()
    assert not with_fpcalc.chromaprint_missing and not AudioSignature.from_dict(with_fpcalc.to_dict()).stale()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_copy_cropped_by_a_tenth_or_rotated_is_found_through_a_centre_hash(seed: int) -> None:
    from curation.audit.image import HASH_RADIUS

    original = scene(seed)
    w, h = original.size
    variants = {
        "original": encode_image(original, "JPEG", quality=90),
        "cropped": encode_image(original.crop((w // 20, h // 20, w - w // 20, h - h // 20)), "JPEG", quality=90),
        "rotated": encode_image(original.rotate(3, Image.Resampling.BICUBIC), "JPEG", quality=90),
    }
    names = list(variants)
    signatures = [image_signature(data, name, SETTINGS) for name, data in variants.items()]
    assert all(len(s.crops) == 2 for s in signatures)
    linked = {(names[i], names[j]) for i, j, _, _ in image_pairs(signatures)}
    assert {("original", "cropped"), ("original", "rotated")} <= linked
    whole = signatures[0].phash, signatures[1].phash
    crop_matches = [bin(a ^ signatures[1].phash).count("1") for a in signatures[0].crops]
    assert min(crop_matches) <= HASH_RADIUS  # the centre hash is what matches a tenth cut off
    assert bin(whole[0] ^ whole[1]).count("1") > min(crop_matches)


def test_the_exact_key_of_a_jpeg_ignores_metadata_but_not_orientation() -> None:
    picture = scene(6, (320, 240))
    plain = encode_image(picture, "JPEG", quality=90)
    exif = Image.Exif()
    exif[0x010F] = "Some Camera"
    tagged = encode_image(picture, "JPEG", quality=90, exif=exif.tobytes(), comment=b"holiday")
    exif[0x0112] = 6  # rotated 90 degrees
    turned = encode_image(picture, "JPEG", quality=90, exif=exif.tobytes())
    keys = [image_signature(data, "a.jpg", SETTINGS).pixels_sha256 for data in (plain, tagged, turned)]
    assert plain != tagged
    assert keys[0] == keys[1] != keys[2]


def test_a_truncated_jpeg_is_refused_though_decoded_at_reduced_size() -> None:
    from curation.mediatools.image import decode_reduced

    data = encode_image(scene(7), "JPEG", quality=90)
    assert decode_reduced(data, "whole.jpg", SETTINGS, 64).size == (100, 75)  # decoded at 1/8 scale
    with pytest.raises(MediaError, match="cut.jpg: the image data is corrupt"):
        decode_reduced(data[: len(data) // 2], "cut.jpg", SETTINGS, 64)
