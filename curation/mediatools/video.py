"""Video as a first-class medium: probed and fingerprinted through PyAV (FFmpeg's libraries, shipped in the
``av`` wheel), never by parsing containers by hand.

A video is hashed (SHA-256 of its bytes, as every medium in the store), probed for its duration, frame
size, frame rate and codec (the whole stream is demuxed, so a truncated file is caught), and fingerprinted
by 64-bit perceptual hashes of its keyframes for the duplicate audit: two videos are near duplicates when
some keyframe of one lies within a few bits of some keyframe of the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from curation.errors import MediaError

VIDEO_TYPES = {"mp4": ("video/mp4", ".mp4"), "webm": ("video/webm", ".webm"), "mov": ("video/quicktime", ".mov")}
MAX_KEYFRAMES = 16
MIN_KEYFRAMES = 3
"""A clip with fewer keyframes than this (short clips often have one) is sampled at evenly spaced times."""
KEYFRAME_RADIUS = 8
"""Keyframes within this many of 64 bits count as the same picture (re-encoding stays within ~4)."""


@dataclass(frozen=True)
class VideoInfo:
    sha256: str
    size_bytes: int
    container: str
    codec: str
    width: int
    height: int
    duration_s: float
    fps: float | None
    frames: int
    has_audio: bool

    @property
    def mime(self) -> str:
        for name, (mime, _) in VIDEO_TYPES.items():
            if name in self.container.split(","):
                return mime
        return "video/" + self.container.split(",")[0]


def _open(path: Path):  # type: ignore[no-untyped-def]
    import av

    try:
        return av.open(str(path))
    except (av.error.FFmpegError, OSError) as exc:
        raise MediaError(f"{path.name}: not a readable video ({exc})") from exc


def _frames_problem(frames: int, name: str, max_frames: int) -> str | None:
    if frames <= max_frames:
        return None
    return (
        f"{name}: the video has {frames:,} frames, more than the {max_frames:,} allowed ([media] max_video_frames); "
        "cut it shorter and add it again"
    )


def _header_problem(stream, name: str, max_frames: int | None, max_pixels: int | None) -> str | None:  # type: ignore[no-untyped-def]
    """Why the stream's header alone refuses it (frame size over ``max_pixels``, more frames than ``max_frames``
    by its frame count or its duration × frame rate), before a packet is read."""
    from curation.media import pixels_problem

    width, height = int(stream.codec_context.width or 0), int(stream.codec_context.height or 0)
    if max_pixels is not None and (problem := pixels_problem(width, height, name, max_pixels)):
        return problem.replace("the image is", "each frame is", 1)
    if max_frames is None:
        return None
    declared = int(stream.frames or 0)
    if not declared and stream.duration is not None and stream.average_rate:
        declared = int(float(stream.duration * stream.time_base) * float(stream.average_rate))
    return _frames_problem(declared, name, max_frames)


def probe_video(path: Path, max_frames: int | None = None, max_pixels: int | None = None) -> VideoInfo:
    """Demux every packet of the first video stream; refuse files without one or without any frame, and (where
    the limits are given: an import) one whose header says its frames are too large or too many, before any
    packet is read, or whose stream holds more frames than ``max_frames``, as soon as the count passes it."""
    import av

    from curation.jsonl import not_a_file
    from curation.media import sha256_file

    path = Path(path)
    if (problem := not_a_file(path)) is not None:
        raise MediaError(f"{path}: {problem}" if problem != "does not exist" else f"{path}: no such video file")
    with _open(path) as container:
        streams = container.streams.video
        if not streams:
            raise MediaError(f"{path.name}: holds no video stream")
        stream = streams[0]
        if problem := _header_problem(stream, path.name, max_frames, max_pixels):
            raise MediaError(problem)
        frames, last_end = 0, 0.0
        try:
            for packet in container.demux(stream):
                if packet.size == 0 or packet.pts is None:
                    continue
                frames += 1
                if max_frames is not None and frames > max_frames:
                    raise MediaError(_frames_problem(frames, path.name, max_frames) or "")
                end = float((packet.pts + (packet.duration or 0)) * packet.time_base)
                last_end = max(last_end, end)
        except av.error.FFmpegError as exc:
            raise MediaError(f"{path.name}: the video stream is damaged ({exc})") from exc
        if frames == 0:
            raise MediaError(f"{path.name}: the video stream holds no frame")
        start = float(stream.start_time * stream.time_base) if stream.start_time is not None else 0.0
        if stream.duration is not None:
            duration = float(stream.duration * stream.time_base)
        elif container.duration is not None:
            duration = container.duration / 1_000_000
        else:
            duration = last_end - start
        rate = stream.average_rate
        return VideoInfo(
            sha256=sha256_file(path),
            size_bytes=path.stat().st_size,
            container=container.format.name,
            codec=stream.codec_context.name,
            width=int(stream.codec_context.width),
            height=int(stream.codec_context.height),
            duration_s=round(max(duration, last_end - start), 6),
            fps=float(rate) if rate else None,
            frames=frames,
            has_audio=bool(container.streams.audio),
        )


def _phash(image) -> int:  # type: ignore[no-untyped-def]
    import imagehash

    value = 0
    for bit in imagehash.phash(image.convert("RGB")).hash.flatten():
        value = (value << 1) | int(bit)
    return value


def keyframe_hashes(path: Path, max_frames: int = MAX_KEYFRAMES) -> list[int]:
    """Perceptual hashes (64-bit pHash) of up to ``max_frames`` keyframes, in time order.

    When the clip has fewer than ``MIN_KEYFRAMES`` keyframes, frames at evenly spaced times are hashed
    instead, so that a one-keyframe clip still has a few fingerprints.
    """
    import av

    path = Path(path)
    hashes: list[int] = []
    try:
        with _open(path) as container:
            stream = container.streams.video[0]
            stream.codec_context.skip_frame = "NONKEY"
            for frame in container.decode(stream):
                hashes.append(_phash(frame.to_image()))
                if len(hashes) >= max_frames:
                    break
        if len(hashes) >= MIN_KEYFRAMES:
            return hashes
        info = probe_video(path)
        wanted = min(max_frames, max(MIN_KEYFRAMES, len(hashes)), info.frames)
        targets = [info.duration_s * (k + 0.5) / wanted for k in range(wanted)]
        sampled: list[int] = []
        with _open(path) as container:
            stream = container.streams.video[0]
            for frame in container.decode(stream):
                if frame.time is None:
                    continue
                while len(sampled) < wanted and frame.time + 1e-9 >= targets[len(sampled)]:
                    sampled.append(_phash(frame.to_image()))
                if len(sampled) == wanted:
                    break
        return sampled or hashes
    except av.error.FFmpegError as exc:
        raise MediaError(f"{path.name}: cannot decode the video's frames ({exc})") from exc


def near_duplicate_videos(
    keyframes: Mapping[str, Sequence[int]], radius: int = KEYFRAME_RADIUS
) -> list[tuple[str, str, int]]:
    """Pairs of videos (a < b) sharing a keyframe within ``radius`` bits, with the closest distance.

    Uses the audit's multi-index Hamming search over all keyframes at once: no video is compared with
    every other.
    """
    from curation.audit.hamming import pairs_within

    owners: list[str] = []
    values: list[int] = []
    for name, hashes in keyframes.items():
        owners += [name] * len(hashes)
        values += list(hashes)
    if len(values) < 2:
        return []
    best: dict[tuple[str, str], int] = {}
    for i, j, distance in pairs_within(np.asarray(values, dtype=np.uint64), radius).tolist():
        a, b = owners[i], owners[j]
        if a == b:
            continue
        key = (a, b) if a < b else (b, a)
        best[key] = min(best.get(key, 64), distance)
    return sorted((a, b, d) for (a, b), d in best.items())
