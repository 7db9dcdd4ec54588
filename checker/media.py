"""Loading an item's media the way models take them: RGB images, mono float32 audio at a given rate."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np

from curation.errors import MediaError
from curation.jsonl import not_a_file
from curation.media import PIL_HARD_LIMIT, bomb_problem, open_image


def load_image(path: Path, max_pixels: int = PIL_HARD_LIMIT):  # type: ignore[no-untyped-def]
    """The image as RGB, opened by the shared door (:func:`curation.media.open_image`): its header is checked
    first, so a decompression bomb (a file swapped since it was imported, a candidate's image that was never
    screened) is a :class:`MediaError` naming the file and its size, never decoded, never Pillow's own error.
    ``max_pixels`` defaults to the most any workspace may allow (``[media] max_image_pixels``)."""
    from PIL import Image

    if (why := not_a_file(path)) is not None:
        raise MediaError(f"cannot read image {path}: it {why}")
    image = open_image(path, str(path), max_pixels)
    try:
        with image:
            return image.convert("RGB")
    except Image.DecompressionBombError as exc:
        raise MediaError(bomb_problem(exc, str(path), max_pixels)) from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise MediaError(f"{path}: the image is corrupt or truncated; export it again") from exc


def resample(signal: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """Band-limited (FFT) resampling; clips are short, so the whole-signal transform is cheap."""
    if rate_in == rate_out or signal.size == 0:
        return signal.astype(np.float32)
    n_out = int(round(signal.size * rate_out / rate_in))
    spectrum = np.fft.rfft(signal)
    bins = n_out // 2 + 1
    if bins <= spectrum.size:
        spectrum = spectrum[:bins]
    else:
        spectrum = np.concatenate([spectrum, np.zeros(bins - spectrum.size, dtype=spectrum.dtype)])
    return (np.fft.irfft(spectrum, n_out) * (n_out / signal.size)).astype(np.float32)


def _read_pcm_wav(path: Path) -> tuple[np.ndarray, int]:
    """16-bit PCM WAV with the standard library, where soundfile is not installed (the GPU check)."""
    import wave

    with wave.open(str(path), "rb") as wav:
        if wav.getsampwidth() != 2:
            raise MediaError(f"cannot read audio {path} without soundfile: only 16-bit PCM WAV")
        frames = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.float32) / 32768.0
        return frames.reshape(-1, wav.getnchannels()), wav.getframerate()


def load_audio(path: Path, rate: int) -> np.ndarray:
    """Mono float32 samples at ``rate`` Hz."""
    try:
        import soundfile as sf
    except ImportError:
        data, file_rate = _read_pcm_wav(path)
    else:
        try:
            data, file_rate = sf.read(str(path), dtype="float32", always_2d=True)
        except (RuntimeError, sf.LibsndfileError) as exc:
            raise MediaError(f"cannot read audio {path}: {exc}") from exc
    return resample(data.mean(axis=1), file_rate, rate)


_MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp"}


def image_data_url(path: Path) -> str:
    """The file's own bytes as a data URL (no re-encoding, so every backend decodes the same pixels)."""
    mime = _MIME.get(path.suffix.lower())
    if mime is None:
        raise MediaError(f"{path}: images are sent as JPEG, PNG or WebP, not {path.suffix}")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def wav_base64(path: Path) -> str:
    """A WAV file's bytes in base64 (other formats are converted to 16-bit WAV first)."""
    if path.suffix.lower() == ".wav":
        return base64.b64encode(path.read_bytes()).decode("ascii")
    import soundfile as sf

    data, rate = sf.read(str(path), dtype="float32")
    buffer = io.BytesIO()
    sf.write(buffer, data, rate, format="WAV", subtype="PCM_16")
    return base64.b64encode(buffer.getvalue()).decode("ascii")
