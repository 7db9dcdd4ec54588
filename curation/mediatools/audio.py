"""Audio: decode, measure (ITU-R BS.1770 loudness, true peak), normalize, check, derive probe input.

The normalized form is TRIAD's recording spec (App. B.3): 48 kHz, mono, 16-bit PCM WAV at -23 LUFS
integrated, with a true-peak ceiling so that the gain never clips. Bringing every clip to the same
integrated loudness is also the sister level-matching of App. B.5.
"""

from __future__ import annotations

import functools
import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from curation.config import MediaSettings
from curation.errors import MediaError

from .common import NormalizedMedia, guard_size

RESAMPLER_QUALITY = "VHQ"
"""soxr's very-high-quality preset for the delivered audio."""
TRUE_PEAK_OVERSAMPLING = 4
"""BS.1770-4 Annex 2 estimates the true peak on a 4x oversampled signal."""
GAIN_EPSILON_DB = 0.05
"""A conforming canonical WAV whose needed gain is below this is rewritten sample for sample (idempotence)."""
LOUDNESS_TOLERANCE_LU = 0.5
"""``media:loudness`` is reported beyond this distance from the target (unless the clip is peak-limited)."""
PEAK_LIMITED_MARGIN_DB = 0.5
"""A clip quieter than the target whose true peak is within this of the ceiling cannot be made louder."""
TRUE_PEAK_TOLERANCE_DB = 0.1
CLIP_LEVEL = 0.999
CLIP_MIN_RUN = 3
"""Three or more consecutive samples at full scale are counted as a clipped run."""
SILENCE_LUFS = -70.0
"""BS.1770's absolute gate: a clip with no block above it has no measurable loudness."""
MIN_MEASURABLE_SECONDS = 0.4
"""One BS.1770 gating block; shorter clips have no integrated loudness."""
LOUDNESS_BLOCK_S = 0.4
LOUDNESS_OVERLAP = 0.75
"""BS.1770-4's gating blocks: 400 ms, overlapping by 75 % (pyloudnorm's defaults, whose values are kept)."""


@dataclass(frozen=True)
class DecodedAudio:
    """Samples as float64 in [-1, 1) with shape (frames, channels), plus the container's description."""

    samples: np.ndarray
    sample_rate: int
    format: str
    subtype: str
    pcm16: np.ndarray | None
    """The exact int16 samples when the file is 16-bit PCM (lossless round trip)."""

    @property
    def channels(self) -> int:
        return int(self.samples.shape[1])

    @property
    def duration_s(self) -> float:
        return self.samples.shape[0] / self.sample_rate

    def mono(self) -> np.ndarray:
        """Channel average: the downmix of a mono recording made with several microphones."""
        return self.samples.mean(axis=1) if self.channels > 1 else self.samples[:, 0]


@dataclass(frozen=True)
class NormalizedAudioLevel:
    """Loudness and true peak of a signal, in LUFS and dBTP."""

    lufs: float
    true_peak_dbtp: float


def _open(data: bytes, name: str):  # type: ignore[no-untyped-def]
    import soundfile as sf

    try:
        return sf.SoundFile(io.BytesIO(data))
    except (sf.LibsndfileError, RuntimeError, TypeError) as exc:
        # libsndfile's own words, without soundfile's "Error opening <_io.BytesIO object at 0x...>: " (an address
        # differs on every run: the stored fact and the message would too)
        why = getattr(exc, "error_string", None) or str(exc)
        raise MediaError(
            f"{name}: not a readable audio file ({why}); export it as WAV or FLAC and import it again"
        ) from exc


def _header(data: bytes, name: str) -> tuple[int, int, int, str, str]:
    with _open(data, name) as f:
        return f.frames, f.samplerate, f.channels, f.format, f.subtype


def decode_audio(data: bytes, name: str, settings: MediaSettings | None) -> DecodedAudio:
    """Decode any format libsndfile reads (WAV, FLAC, OGG, MP3, ...); refuse empty, corrupt, oversized.

    ``settings`` None applies no size or length limit: for files already in the store, whose facts are
    measured once whatever the limits of the day (``curation.mediatools.facts``).
    """
    import soundfile as sf

    guard_size(data, name, settings)
    max_seconds = settings.audio_max_seconds if settings is not None else math.inf
    with _open(data, name) as f:
        if f.samplerate <= 0 or f.channels <= 0:
            raise MediaError(f"{name}: the audio header is invalid (rate {f.samplerate}, channels {f.channels})")
        if f.frames > 0 and f.frames / f.samplerate > max_seconds:
            raise MediaError(_too_long(name, f.frames / f.samplerate, max_seconds))
        try:
            if f.subtype == "PCM_16":
                pcm16 = f.read(dtype="int16", always_2d=True)
                samples = pcm16.astype(np.float64) / 32768.0
            else:
                pcm16 = None
                samples = f.read(dtype="float64", always_2d=True)
        except (sf.LibsndfileError, RuntimeError) as exc:
            raise MediaError(f"{name}: the audio data is corrupt ({exc}); export the clip again") from exc
        fmt, subtype, rate = f.format, f.subtype, f.samplerate
    if samples.shape[0] == 0:
        raise MediaError(f"{name}: the audio file holds no samples; replace it with a real recording")
    if samples.shape[0] / rate > max_seconds:
        raise MediaError(_too_long(name, samples.shape[0] / rate, max_seconds))
    if not np.all(np.isfinite(samples)):
        raise MediaError(f"{name}: the audio holds NaN or infinite samples; export the clip again")
    return DecodedAudio(samples, rate, fmt, subtype, pcm16)


def _too_long(name: str, seconds: float, max_seconds: float) -> str:
    return f"{name}: {seconds:.1f} s is longer than the limit of {max_seconds:g} s (media.audio_max_seconds); trim the clip"


def resample(signal: np.ndarray, rate_in: int, rate_out: int, quality: str = RESAMPLER_QUALITY) -> np.ndarray:
    """Band-limited resampling with soxr (no-op when the rates agree)."""
    if rate_in == rate_out:
        return signal
    import soxr

    return soxr.resample(signal, rate_in, rate_out, quality=quality)


def integrated_loudness(signal: np.ndarray, rate: int) -> float:
    """BS.1770 integrated loudness in LUFS (-inf for silence); needs at least one 400 ms block."""
    import pyloudnorm

    if signal.shape[0] < MIN_MEASURABLE_SECONDS * rate:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        if signal.ndim == 1 and signal.dtype == np.float64:
            return _mono_loudness(signal, rate)
        return float(pyloudnorm.Meter(rate).integrated_loudness(signal))


@functools.cache
def _k_weighting(rate: int) -> tuple[tuple[float, np.ndarray, np.ndarray], ...]:
    """pyloudnorm's K-weighting stages at ``rate`` as (passband gain, b, a), in the order its meter applies them."""
    import pyloudnorm

    stages = pyloudnorm.Meter(rate)._filters.values()  # the meter's own filters: its coefficients, not a copy
    return tuple((stage.passband_gain, stage.b, stage.a) for stage in stages)


def _mono_loudness(signal: np.ndarray, rate: int) -> float:
    """pyloudnorm's ``Meter.integrated_loudness`` of a mono float64 signal, value for value, without its per-block
    Python work: the same filters, the same block bounds and the same sums, each square computed once."""
    from scipy.signal import lfilter

    filtered = signal
    for gain, b, a in _k_weighting(rate):
        filtered = gain * lfilter(b, a, filtered)
    squares = np.square(filtered)
    block, step, absolute = LOUDNESS_BLOCK_S, 1.0 - LOUDNESS_OVERLAP, SILENCE_LUFS
    count = int(np.round((signal.shape[0] / rate - block) / (block * step))) + 1
    scale = 1.0 / (block * rate)
    bounds = [(int(block * (j * step) * rate), int(block * (j * step + 1) * rate)) for j in range(count)]
    energies = np.array([scale * np.add.reduce(squares[lo:hi]) for lo, hi in bounds])
    levels = np.array([-0.691 + 10.0 * np.log10(energy) for energy in energies])  # one by one, as pyloudnorm
    gated = energies[levels >= absolute]
    relative = -0.691 + 10.0 * np.log10(np.mean(gated) if len(gated) else np.nan) - 10.0
    kept = energies[(levels > relative) & (levels > absolute)]
    mean = np.nan_to_num(np.mean(kept)) if len(kept) else 0.0
    return float(-0.691 + 10.0 * np.log10(mean))


def true_peak_dbtp(signal: np.ndarray, rate: int) -> float:
    """True peak in dBTP estimated on a 4x oversampled copy (BS.1770-4 Annex 2)."""
    oversampled = resample(signal, rate, rate * TRUE_PEAK_OVERSAMPLING, quality="HQ")
    peak = max(_magnitude(signal), _magnitude(oversampled))
    return 20.0 * math.log10(peak) if peak > 0 else float("-inf")


def _magnitude(signal: np.ndarray) -> float:
    """The largest absolute sample (0 for none), without an array of absolute values."""
    return max(float(signal.max(initial=0.0)), -float(signal.min(initial=0.0)))


def clipped_runs(signal: np.ndarray) -> int:
    """How many runs of at least three consecutive full-scale samples the signal holds."""
    hot = np.abs(signal) >= CLIP_LEVEL
    if not hot.any():
        return 0
    edges = np.diff(np.concatenate(([0], hot.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return int(np.count_nonzero(ends - starts >= CLIP_MIN_RUN))


def measure_level(signal: np.ndarray, rate: int) -> NormalizedAudioLevel:
    return NormalizedAudioLevel(integrated_loudness(signal, rate), true_peak_dbtp(signal, rate))


def _to_pcm16(signal: np.ndarray) -> np.ndarray:
    return np.clip(np.round(signal * 32768.0), -32768, 32767).astype(np.int16)


def _wav_bytes(pcm16: np.ndarray, rate: int) -> bytes:
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, pcm16, rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def _is_canonical(decoded: DecodedAudio, settings: MediaSettings) -> bool:
    return (
        decoded.format == "WAV"
        and decoded.subtype == settings.audio_subtype
        and decoded.sample_rate == settings.audio_sample_rate
        and decoded.channels == settings.audio_channels
        and decoded.pcm16 is not None
    )


def normalize_audio(data: bytes, name: str, settings: MediaSettings) -> NormalizedMedia:
    """48 kHz mono 16-bit WAV at the target loudness, gain capped so the true peak stays under the ceiling.

    Idempotent: a canonical WAV that needs less than 0.05 dB of gain is rewritten sample for sample, and
    a normalized file is such a WAV, so normalizing it again returns the same bytes.
    """
    if settings.audio_channels != 1 or settings.audio_subtype != "PCM_16":
        raise MediaError("only mono 16-bit PCM output is supported (media.audio_channels, media.audio_subtype)")
    decoded = decode_audio(data, name, settings)
    rate = settings.audio_sample_rate
    if decoded.duration_s < MIN_MEASURABLE_SECONDS:
        raise MediaError(
            f"{name}: {decoded.duration_s:.2f} s is too short to measure loudness (at least "
            f"{MIN_MEASURABLE_SECONDS} s); record a longer clip"
        )
    signal = resample(decoded.mono(), decoded.sample_rate, rate)
    before = measure_level(signal, rate)
    if not math.isfinite(before.lufs) or before.lufs < SILENCE_LUFS:
        raise MediaError(f"{name}: the clip is silent (no block above {SILENCE_LUFS:g} LUFS); re-record it")
    wanted_gain = settings.audio_lufs - before.lufs
    gain_db = min(wanted_gain, settings.audio_true_peak_dbtp - before.true_peak_dbtp)
    params: dict[str, Any] = {
        "transform": "audio_normalize",
        "sample_rate": rate,
        "channels": 1,
        "subtype": settings.audio_subtype,
        "target_lufs": settings.audio_lufs,
        "true_peak_ceiling_dbtp": settings.audio_true_peak_dbtp,
        "resampler": f"soxr {RESAMPLER_QUALITY}",
        "source": {
            "format": decoded.format,
            "subtype": decoded.subtype,
            "sample_rate": decoded.sample_rate,
            "channels": decoded.channels,
        },
        "input_lufs": round(before.lufs, 3),
        "input_true_peak_dbtp": round(before.true_peak_dbtp, 3),
    }
    if _is_canonical(decoded, settings) and abs(gain_db) < GAIN_EPSILON_DB:
        assert decoded.pcm16 is not None
        out = _wav_bytes(decoded.pcm16[:, 0], rate)
        params.update(
            gain_db=0.0,
            peak_limited=False,
            output_lufs=params["input_lufs"],
            output_true_peak_dbtp=params["input_true_peak_dbtp"],
        )
        return NormalizedMedia(out, "wav", "audio/wav", params, unchanged=True)
    pcm16 = _to_pcm16(signal * 10.0 ** (gain_db / 20.0))
    after = measure_level(pcm16.astype(np.float64) / 32768.0, rate)
    params.update(
        gain_db=round(gain_db, 3),
        peak_limited=gain_db < wanted_gain - 1e-9,
        output_lufs=round(after.lufs, 3),
        output_true_peak_dbtp=round(after.true_peak_dbtp, 3),
    )
    return NormalizedMedia(_wav_bytes(pcm16, rate), "wav", "audio/wav", params, unchanged=False)


def probe_audio(data: bytes, name: str, settings: MediaSettings, sample_rate: int = 16000) -> np.ndarray:
    """Model-input derivative: mono float32 at ``sample_rate`` (16 kHz for speech encoders)."""
    return probe_signal(decode_audio(data, name, settings), sample_rate)


def probe_signal(decoded: DecodedAudio, sample_rate: int = 16000) -> np.ndarray:
    """:func:`probe_audio` of a clip decoded already."""
    return resample(decoded.mono(), decoded.sample_rate, sample_rate, quality="HQ").astype(np.float32)


def within_limits(decoded: DecodedAudio, data: bytes, name: str, settings: MediaSettings, frames: int) -> DecodedAudio:
    """A clip decoded without limits (as its facts are measured), held to ``settings`` as
    ``decode_audio(data, name, settings)`` holds it: the same clip, or the :class:`MediaError` that refuses it.
    ``frames``: the length its header gives."""
    guard_size(data, name, settings)
    for length in (frames, decoded.samples.shape[0]):
        if length / decoded.sample_rate > settings.audio_max_seconds:
            raise MediaError(_too_long(name, length / decoded.sample_rate, settings.audio_max_seconds))
    return decoded
