"""Video probing and keyframe hashes on clips that PyAV itself encodes (no hand-made bytes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from curation.errors import MediaError
from curation.mediatools.video import keyframe_hashes, near_duplicate_videos, probe_video


def scene(kind: int, t: float, width: int, height: int) -> np.ndarray:
    """Seeded coloured blocks (``kind`` picks the layout) with a bright bar sweeping across over time."""
    blocks = np.random.default_rng(kind).integers(0, 256, size=(6, 8, 3))
    y, x = np.mgrid[0:height, 0:width]
    img = blocks[y * 6 // height, x * 8 // width].astype(np.int64)
    bar = np.abs(x - int(t * width / 2)) < width // 12
    img[bar] = 255
    return img.astype(np.uint8)


def make_clip(
    path: Path, kind: int = 0, seconds: float = 2.0, fps: int = 10, size=(96, 64), gop: int = 5, codec="mpeg4"
) -> Path:
    import av

    width, height = size
    with av.open(str(path), "w") as out:
        stream = out.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.gop_size = gop
        for n in range(int(seconds * fps)):
            frame = av.VideoFrame.from_ndarray(scene(kind, n / fps, width, height), format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def test_probe_reads_duration_size_and_codec(tmp_path):
    clip = make_clip(tmp_path / "a.mp4", seconds=2.0, fps=10, size=(96, 64))
    info = probe_video(clip)
    assert (info.width, info.height, info.codec, info.frames) == (96, 64, "mpeg4", 20)
    assert info.duration_s == pytest.approx(2.0, abs=0.15)
    assert info.fps == pytest.approx(10)
    assert info.mime == "video/mp4" and not info.has_audio
    assert len(info.sha256) == 64 and info.size_bytes == clip.stat().st_size


def test_keyframes_are_hashed_and_a_reencode_is_a_near_duplicate(tmp_path):
    a = make_clip(tmp_path / "a.mp4", kind=0, gop=5)
    again = make_clip(tmp_path / "a-small.mkv", kind=0, gop=5, size=(80, 52), codec="libx264")  # re-encoded, resized
    other = make_clip(tmp_path / "b.mp4", kind=1, gop=5)
    hashes = {name: keyframe_hashes(p) for name, p in (("a", a), ("again", again), ("other", other))}
    assert len(hashes["a"]) == 4  # 20 frames, a keyframe every 5
    assert all(0 <= h < 1 << 64 for h in hashes["a"])
    pairs = near_duplicate_videos(hashes)
    assert [(x, y) for x, y, _ in pairs] == [("a", "again")]
    assert pairs[0][2] <= 8


def test_a_one_keyframe_clip_is_sampled_at_even_times(tmp_path):
    clip = make_clip(tmp_path / "long-gop.mp4", gop=100)
    hashes = keyframe_hashes(clip)
    assert len(hashes) == 3 and len(set(hashes)) >= 2  # frames at 1/6, 3/6, 5/6 of the clip differ


def test_broken_and_non_video_files_are_named(tmp_path):
    clip = make_clip(tmp_path / "a.mp4")
    truncated = tmp_path / "cut.mp4"
    truncated.write_bytes(clip.read_bytes()[:300])
    text = tmp_path / "notes.mp4"
    text.write_text("not a video")
    for bad in (truncated, text):
        with pytest.raises(MediaError, match=bad.name):
            probe_video(bad)
    with pytest.raises(MediaError, match="no such video"):
        probe_video(tmp_path / "missing.mp4")
