"""Raw Chromaprint fingerprints, in-process through libchromaprint or by Debian's ``fpcalc``.

Starting one ``fpcalc`` process per clip was most of an import's measuring time, so the library that fpcalc
itself calls is loaded with ``ctypes`` when it is installed (Debian's libchromaprint1, which
libchromaprint-tools and FFmpeg's libavformat depend on). Its fingerprints are fpcalc's, value for value:
fpcalc does not hand the library our 16 kHz samples but converts them first with FFmpeg's libswresample
(at the library's 11,025 Hz, in the "compatible mode" below, without a final flush) and stops after
``-length`` seconds of converted audio; this module does the same steps with the same libraries (the
library's own resampler gives slightly different prints). Without the libraries ``fpcalc`` runs as before;
without either, no chromaprint.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import json
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from curation.errors import MediaError

MAX_SECONDS = 600
"""Audio fingerprinted per clip, as ``fpcalc -length 600`` (the rest of a longer clip is not read)."""
ALGORITHM_DEFAULT = 1
"""``CHROMAPRINT_ALGORITHM_DEFAULT`` (TEST2), fpcalc's default."""
AV_SAMPLE_FMT_S16 = 1
SWR_ENGINE_SWR = 0
COMPATIBLE_MODE: tuple[tuple[str, int | float], ...] = (
    ("resampler", SWR_ENGINE_SWR),
    ("filter_size", 16),
    ("phase_shift", 8),
    ("linear_interp", 1),
    ("cutoff", 0.8),
)
"""fpcalc 1.5's libswresample options (``FFmpegAudioProcessor::SetCompatibleMode``)."""
LIBRARIES = {
    "chromaprint": ("libchromaprint.so.1",),
    "swresample": ("libswresample.so.4", "libswresample.so.5"),
    "avutil": ("libavutil.so.57", "libavutil.so.58", "libavutil.so.59"),
}
"""Sonames tried first (no ``ldconfig`` run), then ``ctypes.util.find_library``."""

Backend = Literal["libchromaprint", "fpcalc"]

_u32_p = ctypes.POINTER(ctypes.c_uint32)


def _open(name: str) -> ctypes.CDLL | None:
    for candidate in (*LIBRARIES[name], ctypes.util.find_library(name)):
        if candidate:
            try:
                return ctypes.CDLL(candidate)
            except OSError:
                continue
    return None


@dataclass(frozen=True)
class ChromaprintLibrary:
    """libchromaprint and the libswresample/libavutil calls fpcalc makes before it (1.5 and FFmpeg 5.1 headers)."""

    chromaprint: ctypes.CDLL
    swresample: ctypes.CDLL
    avutil: ctypes.CDLL

    def __post_init__(self) -> None:
        vp, c_int = ctypes.c_void_p, ctypes.c_int
        cp = self.chromaprint
        _declare(cp.chromaprint_new, vp, [c_int])
        _declare(cp.chromaprint_free, None, [vp])
        _declare(cp.chromaprint_get_sample_rate, c_int, [vp])
        _declare(cp.chromaprint_start, c_int, [vp, c_int, c_int])
        _declare(cp.chromaprint_feed, c_int, [vp, vp, c_int])  # const int16_t *data, size in samples
        _declare(cp.chromaprint_finish, c_int, [vp])
        _declare(cp.chromaprint_get_raw_fingerprint, c_int, [vp, ctypes.POINTER(_u32_p), ctypes.POINTER(c_int)])
        _declare(cp.chromaprint_dealloc, None, [vp])
        sw = self.swresample
        _declare(sw.swr_alloc, vp, [])
        _declare(sw.swr_init, c_int, [vp])
        _declare(sw.swr_convert, c_int, [vp, ctypes.POINTER(vp), c_int, ctypes.POINTER(vp), c_int])
        _declare(sw.swr_free, None, [ctypes.POINTER(vp)])
        av = self.avutil
        _declare(av.av_opt_set, c_int, [vp, ctypes.c_char_p, ctypes.c_char_p, c_int])
        _declare(av.av_opt_set_int, c_int, [vp, ctypes.c_char_p, ctypes.c_int64, c_int])
        _declare(av.av_opt_set_double, c_int, [vp, ctypes.c_char_p, ctypes.c_double, c_int])

    def resample(self, pcm16: np.ndarray, rate: int, target: int) -> np.ndarray:
        """Mono int16 at ``target`` Hz as fpcalc's FFmpeg reader converts it (streamed, never flushed)."""
        ctx = ctypes.c_void_p(self.swresample.swr_alloc())
        if not ctx:
            raise MemoryError("swr_alloc")
        try:
            failed = [name for name, value in self._options(rate, target) if self._set(ctx, name, value) < 0]
            if failed or self.swresample.swr_init(ctx) < 0:
                raise OSError(f"libswresample refused the options {failed or 'it was given'}")
            out = np.empty(len(pcm16) * target // rate + 256, dtype=np.int16)
            out_ptr = (ctypes.c_void_p * 1)(out.ctypes.data)
            in_ptr = (ctypes.c_void_p * 1)(pcm16.ctypes.data)
            count = self.swresample.swr_convert(ctx, out_ptr, len(out), in_ptr, len(pcm16))
            if count < 0:
                raise OSError(f"swr_convert failed ({count})")
            return out[:count]
        finally:
            self.swresample.swr_free(ctypes.byref(ctx))

    @staticmethod
    def _options(rate: int, target: int) -> list[tuple[str, int | float | str]]:
        formats = [("isf", AV_SAMPLE_FMT_S16), ("osf", AV_SAMPLE_FMT_S16), ("isr", rate), ("osr", target)]
        return [*COMPATIBLE_MODE, *formats, ("ichl", "mono"), ("ochl", "mono")]

    def _set(self, ctx: ctypes.c_void_p, name: str, value: int | float | str) -> int:
        key = name.encode()
        if isinstance(value, str):
            return int(self.avutil.av_opt_set(ctx, key, value.encode(), 0))
        if isinstance(value, float):
            return int(self.avutil.av_opt_set_double(ctx, key, value, 0))
        return int(self.avutil.av_opt_set_int(ctx, key, value, 0))

    def fingerprint(self, pcm16: np.ndarray, rate: int) -> list[int]:
        """The raw fingerprint (``fpcalc -raw -length 600``) of mono int16 samples; [] when too short."""
        cp = self.chromaprint
        ctx = cp.chromaprint_new(ALGORITHM_DEFAULT)
        if not ctx:
            raise MemoryError("chromaprint_new")
        try:
            target = int(cp.chromaprint_get_sample_rate(ctx))
            # a second beyond the cut keeps the resampler's look-ahead: the samples before it are fpcalc's
            head = np.ascontiguousarray(pcm16[: (MAX_SECONDS + 1) * rate], dtype=np.int16)
            samples = head if rate == target else self.resample(head, rate, target)
            samples = np.ascontiguousarray(samples[: MAX_SECONDS * target])
            if not cp.chromaprint_start(ctx, target, 1):
                raise OSError("chromaprint_start failed")
            if len(samples) and not cp.chromaprint_feed(ctx, samples.ctypes.data, len(samples)):
                raise OSError("chromaprint_feed failed")
            if not cp.chromaprint_finish(ctx):
                raise OSError("chromaprint_finish failed")
            data, size = _u32_p(), ctypes.c_int()
            if not cp.chromaprint_get_raw_fingerprint(ctx, ctypes.byref(data), ctypes.byref(size)):
                raise OSError("chromaprint_get_raw_fingerprint failed")
            try:
                return [int(v) for v in data[: size.value]]
            finally:
                cp.chromaprint_dealloc(data)
        finally:
            cp.chromaprint_free(ctx)


def _declare(function: Any, restype: type | None, argtypes: list[type]) -> None:
    function.restype = restype
    function.argtypes = argtypes


@functools.cache
def load_library() -> ChromaprintLibrary | None:
    """The libraries, loaded once per process; ``None`` when one of them is not installed."""
    chromaprint, swresample, avutil = _open("chromaprint"), _open("swresample"), _open("avutil")
    if chromaprint is None or swresample is None or avutil is None:
        return None
    try:
        return ChromaprintLibrary(chromaprint, swresample, avutil)
    except AttributeError:  # a build without one of the functions: fpcalc decides
        return None


def backend() -> Backend | None:
    """What computes chromaprints here: the library, else fpcalc on the PATH, else nothing."""
    if load_library() is not None:
        return "libchromaprint"
    return "fpcalc" if shutil.which("fpcalc") else None


def raw_fingerprint(pcm16: np.ndarray, rate: int, name: str) -> list[int] | None:
    """fpcalc's raw fingerprint of mono int16 samples (unsigned 32-bit values); ``None`` without a backend."""
    library = load_library()
    if library is not None:
        try:
            fingerprint = library.fingerprint(pcm16, rate)
        except (OSError, MemoryError) as exc:
            raise MediaError(f"{name}: libchromaprint could not fingerprint the clip: {exc}") from exc
        if not fingerprint:
            raise MediaError(f"{name}: libchromaprint could not fingerprint the clip: empty fingerprint")
        return fingerprint
    return fpcalc_fingerprint(pcm16, rate, name)


def fpcalc_fingerprint(pcm16: np.ndarray, rate: int, name: str) -> list[int] | None:
    """Debian's ``fpcalc`` on the samples; ``None`` when it is not installed.

    fpcalc 1.5 with FFmpeg 5 reports "Error decoding audio frame (End of file)" and a non-zero status
    after a complete fingerprint, so the printed fingerprint, not the exit status, decides success.
    """
    executable = shutil.which("fpcalc")
    if executable is None:
        return None
    command = [executable, "-raw", "-json", "-length", str(MAX_SECONDS), "-format", "s16le"]
    command += ["-rate", str(rate), "-channels", "1", "-"]
    result = subprocess.run(command, input=pcm16.astype("<i2").tobytes(), capture_output=True, check=False)
    try:
        fingerprint = json.loads(result.stdout)["fingerprint"]
    except (ValueError, KeyError, TypeError):
        fingerprint = None
    if not fingerprint:
        detail = result.stderr.decode(errors="replace").strip() or f"exit status {result.returncode}"
        raise MediaError(f"{name}: fpcalc could not fingerprint the clip: {detail}")
    return [int(v) & 0xFFFFFFFF for v in fingerprint]
