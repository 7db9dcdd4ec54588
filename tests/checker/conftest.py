"""Fixtures for the checker tests: real media and a tiny random Qwen2.5-Omni built at test time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PIL import Image, ImageDraw

from tests.conftest import INSTALL_TORCH, require_module


@pytest.fixture(scope="session")
def media_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real picture and a real audio clip (16 kHz tone sweep with a pause, so both encoders see signal)."""
    folder = tmp_path_factory.mktemp("media")
    for name, colour in (("red.png", (200, 30, 30)), ("blue.png", (30, 30, 200))):
        image = Image.new("RGB", (120, 90), colour)
        ImageDraw.Draw(image).ellipse((30, 20, 90, 70), fill=(240, 240, 240))
        image.save(folder / name)
    sr = 16000
    t = np.arange(int(1.5 * sr)) / sr
    sweep = 0.3 * np.sin(2 * np.pi * (220 + 300 * t) * t)
    sweep[int(0.6 * sr) : int(0.8 * sr)] = 0
    sf.write(folder / "sweep.wav", sweep.astype(np.float32), sr, subtype="PCM_16")
    noise = np.random.default_rng(0).normal(0, 0.1, sr).astype(np.float32)
    sf.write(folder / "noise.wav", noise, sr, subtype="PCM_16")
    return folder


@pytest.fixture(scope="session")
def tiny_omni(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised Qwen2.5-Omni (1.5 M parameters) with its processor; no download."""
    for module in ("torch", "transformers"):
        require_module(module, INSTALL_TORCH)
    from checker.random_omni import build_random_omni
    from checker.torch_compat import ensure_torchvision_importable

    ensure_torchvision_importable()
    return build_random_omni(tmp_path_factory.mktemp("tiny-omni") / "model")


@pytest.fixture(scope="session")
def hf_backend(tiny_omni: Path):  # type: ignore[no-untyped-def]
    from checker.backends import open_backend

    return open_backend(f"transformers:{tiny_omni}")
