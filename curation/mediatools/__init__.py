"""Pure media functions on bytes and arrays: normalization, conformity checks, model-input derivatives.

Nothing here touches the workspace: callers pass bytes plus a file name (used only in messages) and
get bytes, arrays or reason codes back, so the same code serves the CLI, the release build and tests.
"""

from .audio import (
    NormalizedAudioLevel,
    decode_audio,
    integrated_loudness,
    normalize_audio,
    probe_audio,
    true_peak_dbtp,
)
from .common import MediaCheck, NormalizedMedia
from .facts import check_audio, check_image, recording_problems
from .image import decode_image, normalize_image

__all__ = [
    "MediaCheck",
    "NormalizedAudioLevel",
    "NormalizedMedia",
    "check_audio",
    "check_image",
    "decode_audio",
    "decode_image",
    "integrated_loudness",
    "normalize_audio",
    "normalize_image",
    "probe_audio",
    "recording_problems",
    "true_peak_dbtp",
]
