"""Normalize N six-second clips with ``curation.mediatools`` and with ffmpeg's ``loudnorm`` filter.

Both produce 48 kHz mono 16-bit WAV at -23 LUFS with a -1 dBTP ceiling from the same files (44.1 kHz
stereo WAV, speech-like, levels spread over 30 dB). ffmpeg runs once per clip, as a pipeline would call it,
in single-pass (dynamic) mode and, for a sample, in the two-pass linear mode that matches what we do.
The accuracy of both is checked on a sample with ffmpeg's ``ebur128`` meter. Times are CPU seconds
(ours, and ffmpeg's child processes), so that other work on a shared machine does not distort them.

    python benchmarks/media_normalize.py [--n 1000] [--accuracy-sample 20]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf

from curation.config import MediaSettings
from curation.mediatools import normalize_audio

RATE = 44100
SECONDS = 6.0
DOWNMIX = "aformat=channel_layouts=mono"
"""Downmix before measuring, as we do: loudnorm on stereo then -ac 1 would land about 3 LU low."""
RESAMPLE = "aresample=48000:resampler=soxr"
"""loudnorm works (and outputs) at 192 kHz; bring it back to 48 kHz with the same resampler family."""


def make_clips(folder: Path, n: int) -> list[Path]:
    """Harmonic syllables with pauses, stereo, at levels from -40 to -10 dBFS peak."""
    rng = np.random.default_rng(3)
    t = np.arange(int(RATE * SECONDS)) / RATE
    paths = []
    for k in range(n):
        f0 = rng.uniform(90, 250)
        syllables = (np.sin(2 * np.pi * rng.uniform(2, 5) * t + rng.uniform(0, 6)) > 0.2).astype(float)
        voice = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 12)) * syllables
        voice += 0.01 * rng.normal(size=t.size)
        voice *= 10 ** (rng.uniform(-40, -10) / 20) / np.max(np.abs(voice))
        stereo = np.stack([voice, 0.8 * voice], axis=1)
        path = folder / f"clip{k:05d}.wav"
        sf.write(path, stereo, RATE, subtype="PCM_16")
        paths.append(path)
    return paths


def cpu_seconds() -> float:
    """CPU time of this process and of the ffmpeg children it has waited for (the machine is shared)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def ours(paths: list[Path], out: Path, settings: MediaSettings) -> float:
    start = cpu_seconds()
    for path in paths:
        result = normalize_audio(path.read_bytes(), path.name, settings)
        (out / path.name).write_bytes(result.data)
    return cpu_seconds() - start


def _ffmpeg(*args: str) -> str:
    return subprocess.run(["ffmpeg", "-hide_banner", *args], check=True, capture_output=True, text=True).stderr


def _encode(source: Path, target: Path, chain: str) -> None:
    _ffmpeg("-v", "error", "-y", "-i", str(source), "-af", chain, "-c:a", "pcm_s16le", str(target))


def ffmpeg_single_pass(paths: list[Path], out: Path) -> float:
    start = cpu_seconds()
    for path in paths:
        _encode(path, out / path.name, f"{DOWNMIX},loudnorm=I=-23:TP=-1:LRA=20,{RESAMPLE}")
    return cpu_seconds() - start


def ffmpeg_two_pass(paths: list[Path], out: Path) -> float:
    start = cpu_seconds()
    for path in paths:
        probe = _ffmpeg(
            "-i", str(path), "-af", f"{DOWNMIX},loudnorm=I=-23:TP=-1:LRA=20:print_format=json", "-f", "null", "-"
        )
        m = json.loads(probe[probe.rindex("{") : probe.rindex("}") + 1])
        chain = (
            f"{DOWNMIX},loudnorm=I=-23:TP=-1:LRA=20:linear=true:measured_I={m['input_i']}:"
            f"measured_TP={m['input_tp']}:measured_LRA={m['input_lra']}:"
            f"measured_thresh={m['input_thresh']}:offset={m['target_offset']},{RESAMPLE}"
        )
        _encode(path, out / path.name, chain)
    return cpu_seconds() - start


def ebur128(path: Path) -> tuple[float, float]:
    text = _ffmpeg("-nostats", "-i", str(path), "-af", "ebur128=peak=true", "-f", "null", "-")
    summary = text[text.rindex("Summary:") :]
    lufs = float(re.search(r"I:\s+(-?[\d.]+) LUFS", summary).group(1))  # type: ignore[union-attr]
    peak = float(re.search(r"Peak:\s+(-?[\d.]+) dBFS", summary).group(1))  # type: ignore[union-attr]
    return lufs, peak


def accuracy(folder: Path, names: list[str]) -> str:
    measured = [ebur128(folder / name) for name in names]
    errors = [abs(lufs + 23.0) for lufs, _ in measured]
    peaks = [peak for _, peak in measured]
    return (
        f"|I - (-23)| mean {statistics.mean(errors):.2f} LU, max {max(errors):.2f} LU; "
        f"true peak max {max(peaks):.1f} dBTP"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="number of six-second clips")
    parser.add_argument("--accuracy-sample", type=int, default=20)
    args = parser.parse_args()
    settings = MediaSettings()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("in", "ours", "ffmpeg", "ffmpeg2"):
            (root / name).mkdir()
        paths = make_clips(root / "in", args.n)
        normalize_audio(paths[0].read_bytes(), "warm-up", settings)  # imports outside the timing
        t_ours = ours(paths, root / "ours", settings)
        t_ffmpeg = ffmpeg_single_pass(paths, root / "ffmpeg")
        sample = paths[: args.accuracy_sample]
        t_two = ffmpeg_two_pass(sample, root / "ffmpeg2") * len(paths) / len(sample)
        names = [p.name for p in sample]
        print(f"{args.n} clips of {SECONDS:g} s (44.1 kHz stereo WAV -> 48 kHz mono PCM_16 at -23 LUFS, -1 dBTP)")
        print(f"  curation.mediatools   : {t_ours:7.1f} cpu s  ({t_ours / args.n * 1000:6.1f} ms/clip)")
        print(
            f"  ffmpeg loudnorm 1-pass: {t_ffmpeg:7.1f} cpu s  ({t_ffmpeg / args.n * 1000:6.1f} ms/clip)"
            f"  -> ours is {t_ffmpeg / t_ours:.2f}x its speed"
        )
        print(
            f"  ffmpeg loudnorm 2-pass: {t_two:7.1f} cpu s  ({t_two / args.n * 1000:6.1f} ms/clip, from "
            f"{len(sample)} clips) -> ours is {t_two / t_ours:.2f}x its speed"
        )
        print(f"  accuracy on {len(sample)} clips by ebur128:")
        print(f"    ours   : {accuracy(root / 'ours', names)}")
        print(f"    1-pass : {accuracy(root / 'ffmpeg', names)}")
        print(f"    2-pass : {accuracy(root / 'ffmpeg2', names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
