"""Conformity in two steps: facts measured from a medium's bytes alone, then the media spec's verdict on them.

The facts (an audio clip's header, decode check, clipped runs, loudness and true peak; an image's format, mode,
size, JPEG segments and quantization tables, decode check) depend only on the bytes, so a workspace measures
them once per content hash and keeps them (``curation.audit.media_facts``); the verdict reads ``[media]`` and
costs nothing. :func:`check_audio` and :func:`check_image` are both steps in one: measured with the settings
as bounds, they stop where the verdict stops, so an oversized or overlong upload is never decoded.

Bump a ``*_FACTS_VERSION`` when what a measurement returns changes: stored facts of older versions are
measured again, and nothing else is.
"""

from __future__ import annotations

import math
from typing import Any

from curation.config import MediaSettings
from curation.errors import MediaError

from .audio import (
    CLIP_MIN_RUN,
    LOUDNESS_TOLERANCE_LU,
    MIN_MEASURABLE_SECONDS,
    PEAK_LIMITED_MARGIN_DB,
    SILENCE_LUFS,
    TRUE_PEAK_TOLERANCE_DB,
    DecodedAudio,
    _header,
    _too_long,
    clipped_runs,
    decode_audio,
    measure_level,
)
from .common import MediaCheck, _Findings, size_problem
from .image import _jpeg_markers, _open, decode_reduced, jpeg_problems, pixels_problem, quantization

AUDIO_FACTS_VERSION = 1
IMAGE_FACTS_VERSION = 1
DECODE_CHECK_EDGE = 64
"""The decode check decodes a picture at a size whose shorter edge is at least this (as the audit's hashes)."""
FACTS_VERSIONS = {"audio": AUDIO_FACTS_VERSION, "image": IMAGE_FACTS_VERSION}
"""The measuring functions' versions by asset kind, stored with each medium's facts."""

Facts = dict[str, Any]
"""JSON-able measurements of one medium (``None`` where a level is not finite: -inf LUFS is silence)."""


def _unnamed(exc: MediaError, name: str) -> str:
    """An error's text without the file name it starts with (the verdict names the file it judges)."""
    return str(exc).removeprefix(f"{name}: ")


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def measure_audio(data: bytes, name: str = "audio", bounds: MediaSettings | None = None) -> Facts:
    """A clip's facts. With ``bounds`` (an untrusted upload) it stops where :func:`audio_verdict` would, before
    decoding an oversized or overlong file; without, it measures everything the verdict may need."""
    return measure_audio_decoded(data, name, bounds)[0]


def measure_audio_decoded(
    data: bytes, name: str = "audio", bounds: MediaSettings | None = None
) -> tuple[Facts, DecodedAudio | None]:
    """:func:`measure_audio`, with the clip as it decoded it (None where it did not decode it), so that the
    audit's signature is taken from the same decode."""
    facts: Facts = {"size": len(data)}
    if not data or (bounds is not None and size_problem(len(data), name, bounds)):
        return facts, None
    try:
        frames, rate, channels, fmt, subtype = _header(data, name)
    except MediaError as exc:
        facts["unreadable"] = _unnamed(exc, name)
        return facts, None
    facts.update(frames=frames, rate=rate, channels=channels, format=fmt, subtype=subtype)
    duration = frames / rate if rate else 0.0
    if duration < MIN_MEASURABLE_SECONDS or (bounds is not None and duration > bounds.audio_max_seconds):
        return facts, None
    try:
        decoded = decode_audio(data, name, bounds)
    except MediaError as exc:
        facts["corrupt"] = _unnamed(exc, name)
        return facts, None
    level = measure_level(decoded.mono(), rate)
    facts.update(
        decoded_frames=int(decoded.samples.shape[0]),
        clipped_runs=clipped_runs(decoded.samples.ravel()),
        lufs=_finite(level.lufs),
        true_peak_dbtp=_finite(level.true_peak_dbtp),
    )
    return facts, decoded


def audio_verdict(facts: Facts, name: str, settings: MediaSettings) -> MediaCheck:
    """Reason codes for every way a clip misses the spec, from its facts (as :func:`check_audio` reports them)."""
    findings = _Findings()
    size = facts["size"]
    if problem := size_problem(size, name, settings):
        findings.add("size" if size else "format", problem)
        return findings.result()
    if "unreadable" in facts:  # an unreadable, non-empty file has always been reported as media:size
        findings.add("size", f"{name}: {facts['unreadable']}")
        return findings.result()
    rate = facts["rate"]
    if facts["format"] != "WAV" or facts["subtype"] != settings.audio_subtype:
        findings.add("format", f"{facts['format']}/{facts['subtype']}, expected WAV/{settings.audio_subtype}")
    if rate != settings.audio_sample_rate:
        findings.add("sample_rate", f"{rate} Hz, expected {settings.audio_sample_rate} Hz")
    if facts["channels"] != settings.audio_channels:
        findings.add("channels", f"{facts['channels']} channels, expected {settings.audio_channels}")
    duration = facts["frames"] / rate if rate else 0.0
    if not settings.audio_min_seconds <= duration <= settings.audio_max_seconds:
        findings.add(
            "duration",
            f"{duration:.2f} s, expected {settings.audio_min_seconds:g}-{settings.audio_max_seconds:g} s",
        )
        if duration > settings.audio_max_seconds or duration < MIN_MEASURABLE_SECONDS:
            return findings.result()
    if "corrupt" in facts:
        findings.add("format", f"{name}: {facts['corrupt']}")
        return findings.result()
    if facts["decoded_frames"] / rate > settings.audio_max_seconds:  # more samples than the header said
        findings.add("format", _too_long(name, facts["decoded_frames"] / rate, settings.audio_max_seconds))
        return findings.result()
    if (runs := facts["clipped_runs"]) > 0:
        findings.add("clipping", f"{runs} run(s) of >= {CLIP_MIN_RUN} full-scale samples; re-record lower")
    lufs, peak = facts["lufs"], facts["true_peak_dbtp"]
    if lufs is None or lufs < SILENCE_LUFS:
        findings.add("silence", f"no block above {SILENCE_LUFS:g} LUFS")
        return findings.result()
    peak_limited = lufs < settings.audio_lufs and peak >= settings.audio_true_peak_dbtp - PEAK_LIMITED_MARGIN_DB
    if abs(lufs - settings.audio_lufs) > LOUDNESS_TOLERANCE_LU and not peak_limited:
        findings.add("loudness", f"{lufs:.1f} LUFS, expected {settings.audio_lufs:g} +- {LOUDNESS_TOLERANCE_LU} LU")
    if peak > settings.audio_true_peak_dbtp + TRUE_PEAK_TOLERANCE_DB:
        findings.add(
            "clipping",
            f"true peak {peak:.2f} dBTP, above the {settings.audio_true_peak_dbtp:g} dBTP ceiling",
        )
    return findings.result()


def check_audio(data: bytes, name: str, settings: MediaSettings) -> MediaCheck:
    """Reason codes for every way a clip misses the spec; an unreadable file reports ``media:format``."""
    return audio_verdict(measure_audio(data, name, settings), name, settings)


def recording_problems(data: bytes, name: str, settings: MediaSettings) -> MediaCheck:
    """The problems of an original that normalization cannot repair: clipped runs, silence, duration."""
    findings = _Findings()
    for code, detail in check_audio(data, name, settings).details.items():
        problem = code.removeprefix("media:")
        if problem in ("silence", "duration"):
            findings.add(problem, detail)
    try:
        decoded = decode_audio(data, name, settings)
    except MediaError:
        return findings.result()
    if (runs := clipped_runs(decoded.samples.ravel())) > 0:
        findings.add("clipping", f"the recording has {runs} clipped run(s); gain cannot undo clipping, re-record")
    return findings.result()


def measure_image(data: bytes, name: str = "image", bounds: MediaSettings | None = None) -> Facts:
    """An image's facts. With ``bounds`` (an untrusted upload) an oversized file or picture is not decoded;
    without, only Pillow's own decompression-bomb limit applies."""
    facts: Facts = {"size": len(data)}
    if not data or (bounds is not None and size_problem(len(data), name, bounds)):
        return facts
    try:
        im = _open(data, name, bounds)
    except MediaError as exc:
        facts["unopenable"] = _unnamed(exc, name)
        return facts
    markers = _jpeg_markers(data)
    facts.update(
        width=im.width,
        height=im.height,
        format=im.format,
        mode=im.mode,
        markers=markers,
        quantization=[list(t) for t in quantization(im)],
    )
    try:
        # whether the pixels decode: a JPEG's decoder reads every coefficient at any scale, so decoding at
        # reduced size finds the same faults as a full decode without its full-resolution copies
        decode_reduced(data, name, bounds, DECODE_CHECK_EDGE)
    except MediaError as exc:
        facts["corrupt"] = _unnamed(exc, name)
    return facts


def image_verdict(facts: Facts, name: str, settings: MediaSettings) -> MediaCheck:
    """Reason codes for every way an image misses the spec, from its facts (as :func:`check_image` reports)."""
    findings = _Findings()
    size = facts["size"]
    problem = size_problem(size, name, settings)
    if problem is None and "unopenable" in facts:
        problem = f"{name}: {facts['unopenable']}"
    if problem is None:
        problem = pixels_problem(facts["width"], facts["height"], name, settings)
    if problem is not None:
        findings.add("size" if "limit" in problem else "format", problem)
        return findings.result()
    width, height = facts["width"], facts["height"]
    if max(width, height) > settings.image_max_edge:
        findings.add("size", f"{width}x{height}, longest edge over {settings.image_max_edge} px")
    quant = tuple(tuple(t) for t in facts["quantization"])
    problems = jpeg_problems(facts["format"], facts["mode"], facts["markers"], quant, settings)
    if "corrupt" in facts:
        problems.add("format", f"{name}: {facts['corrupt']}")
    for code, detail in problems.result().details.items():
        findings.add(code.removeprefix("media:"), detail)
    return findings.result()


def check_image(data: bytes, name: str, settings: MediaSettings) -> MediaCheck:
    """Reason codes for every way an image misses the spec; an unreadable file reports ``media:format``."""
    return image_verdict(measure_image(data, name, settings), name, settings)


def measure(kind: str, data: bytes, name: str) -> Facts:
    """The facts of a stored medium of ``kind`` (``image`` or ``audio``), measured without limits."""
    return measure_image(data, name) if kind == "image" else measure_audio(data, name)


def verdict(kind: str, facts: Facts, name: str, settings: MediaSettings) -> MediaCheck:
    return image_verdict(facts, name, settings) if kind == "image" else audio_verdict(facts, name, settings)
