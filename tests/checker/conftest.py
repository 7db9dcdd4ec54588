"""Fixtures for the checker tests: a demo workspace, probe items with real media, a scripted backend."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PIL import Image, ImageDraw

DEMO_DATA = Path(__file__).resolve().parents[2] / "curation" / "demo" / "data"


@pytest.fixture
def demo_ws(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A workspace with the demo's people, items and reviews (the checker's own: no UI, no status print)."""
    from curation.demo import PEOPLE
    from curation.items import import_items
    from curation.reviews import import_reviews
    from curation.workspace import Workspace

    ws = Workspace.init(tmp_path / "ws")
    for name, roles in PEOPLE.items():
        ws.add_person(name, roles)
    data = tmp_path / "data"
    shutil.copytree(DEMO_DATA, data)
    import_items(ws, data / "items.jsonl")
    import_reviews(ws, data / "reviews.jsonl")
    yield ws
    ws.close()


def demo_items() -> list[dict]:
    return [json.loads(line) for line in (DEMO_DATA / "items.jsonl").read_text().splitlines() if line.strip()]


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
    sweep[int(0.6 * sr):int(0.8 * sr)] = 0
    sf.write(folder / "sweep.wav", sweep.astype(np.float32), sr, subtype="PCM_16")
    noise = np.random.default_rng(0).normal(0, 0.1, sr).astype(np.float32)
    sf.write(folder / "noise.wav", noise, sr, subtype="PCM_16")
    return folder
