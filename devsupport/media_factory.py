"""Small media files and item lines built on the spot (Pillow images, numpy tones)."""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
from PIL import Image, ImageDraw


def make_image(path: Path, colour: str = "red", size: tuple[int, int] = (64, 48), fmt: str = "JPEG") -> Path:
    img = Image.new("RGB", size, colour)
    ImageDraw.Draw(img).ellipse((4, 4, size[0] // 2, size[1] // 2), fill="white")
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, fmt)
    return path


def make_tone(path: Path, freq: float = 440.0, seconds: float = 1.0, rate: int = 16000, gain: float = 0.3) -> Path:
    t = np.arange(int(seconds * rate)) / rate
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, (gain * np.sin(2 * np.pi * freq * t)).astype(np.float32), rate, subtype="PCM_16")
    return path


def item_row(id_: str, group: str = "g1", **overrides: Any) -> dict[str, Any]:
    """A valid item line (design.md format) whose media are media/<id>.jpg and media/<id>.wav."""
    row: dict[str, Any] = {
        "id": id_,
        "group": group,
        "perturbed": "audio",
        "language": "en",
        "author": "ann1",
        "context": "Sure, that was a really helpful suggestion.",
        "image": "media/shared.jpg",
        "audio": f"media/{id_}.wav",
        "question": "How does the speaker feel about the suggestion?",
        "options": {"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"},
        "answer": "A",
        "taxonomy": {"text": "pragmatic", "image": "semiotic", "audio": "prosodic"},
        "ambiguous": ["text", "audio"],
        "provenance": {
            "image": {"source": "photo", "license": "CC0-1.0"},
            "audio": {"source": "voice_acting", "license": "CC-BY-4.0"},
        },
    }
    row.update(overrides)
    return row


def write_items(folder: Path, rows: list[dict[str, Any]], name: str = "items.jsonl") -> Path:
    """Write rows and create any media they name that does not exist yet (distinct tone per file)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, row in enumerate(rows):
        for kind in ("image", "audio"):
            rel = row.get(kind)
            if not isinstance(rel, str) or rel.startswith(("/", "..")) or ".." in rel:
                continue
            target = folder / rel
            if not target.exists():
                if kind == "image":
                    make_image(target, colour=["red", "green", "blue", "yellow"][i % 4])
                else:
                    make_tone(target, freq=220.0 + 37.0 * (zlib.crc32(rel.encode()) % 50))
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


WORDS = [
    "amber",
    "basket",
    "cedar",
    "dolphin",
    "ember",
    "falcon",
    "garnet",
    "harbor",
    "island",
    "jasmine",
    "kettle",
    "lantern",
    "meadow",
    "nickel",
    "orchard",
    "pepper",
    "quartz",
    "ribbon",
    "saddle",
    "thistle",
    "umber",
    "velvet",
    "walnut",
    "yarrow",
    "zephyr",
    "anchor",
    "bramble",
    "cobalt",
    "drizzle",
    "eclipse",
    "fennel",
    "glacier",
    "hollow",
    "indigo",
    "juniper",
    "kelp",
    "lagoon",
    "mosaic",
    "nectar",
    "opal",
    "pebble",
    "quiver",
    "russet",
    "sorrel",
    "tundra",
]


def distinct_context(group: str) -> str:
    """Ten words drawn for this group: contexts of different groups share no 3-word shingles."""
    rng = random.Random(zlib.crc32(group.encode()))
    return "The " + " ".join(rng.sample(WORDS, 10)) + "."
