"""Workspaces whose items pass every review stage: the input release tests and the benchmark start from."""

from __future__ import annotations

import io
import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
from PIL import Image

from curation.config import MediaSettings
from curation.items import import_items
from curation.mediatools import normalize_audio, normalize_image
from curation.reviews import import_reviews
from curation.workspace import Workspace
from devsupport.media_factory import distinct_context, item_row, write_items
from devsupport.reviews import REVIEWERS, admitting_reviews


def distinct_media(folder: Path, rows: list[dict[str, Any]]) -> None:
    """Noise images (one per group) and noise-modulated tones (one per item) that no audit can confuse,
    already normalized to the media spec, so that releases ship them as they are."""
    settings = MediaSettings()
    for row in rows:
        image = folder / row["image"]
        if not image.exists():
            rng = np.random.default_rng(zlib.crc32(row["group"].encode()))
            image.parent.mkdir(parents=True, exist_ok=True)
            raw = io.BytesIO()
            Image.fromarray(rng.integers(0, 255, (96, 128, 3), dtype=np.uint8)).save(raw, "PNG")
            image.write_bytes(normalize_image(raw.getvalue(), image.name, settings).data)
        audio = folder / row["audio"]
        if not audio.exists():
            rng = np.random.default_rng(zlib.crc32(row["id"].encode()))
            t = np.arange(48000) / 48000
            envelope = np.repeat(rng.uniform(0.1, 1.0, 20), 2400)
            signal = 0.3 * envelope * np.sin(2 * np.pi * rng.uniform(150, 900) * t) + 0.02 * rng.standard_normal(48000)
            raw = io.BytesIO()
            sf.write(raw, signal.astype(np.float32), 48000, subtype="PCM_16", format="WAV")
            audio.write_bytes(normalize_audio(raw.getvalue(), audio.name, settings).data)


def group_rows(group: str, options: int = 4, language: str = "en") -> list[dict[str, Any]]:
    """Two audio-perturbed sisters (answers A and B) sharing context and image."""
    keys = "ABCDEFGH"[:options]
    words = ["grateful", "sarcastic", "ambivalent", "surprised", "bored", "angry", "proud", "tired"]
    return [
        item_row(
            f"{group}-{suffix}",
            group=group,
            answer=answer,
            language=language,
            context=distinct_context(group),
            image=f"media/{group}.jpg",
            options={k: words[i] for i, k in enumerate(keys)},
        )
        for suffix, answer in (("a", "A"), ("b", "B"))
    ]


def fill_workspace(ws: Workspace, folder: Path, rows: list[dict[str, Any]]) -> None:
    known = {p.name for p in ws.people()}
    for name, roles in {"ann1": ["author"], **{r: ["reviewer"] for r in REVIEWERS}}.items():
        if name not in known:
            ws.add_person(name, roles)
    distinct_media(folder, rows)
    import_items(ws, write_items(folder, rows))
    reviews = folder / "reviews.jsonl"
    reviews.write_text("".join(json.dumps(r) + "\n" for r in admitting_reviews(rows)), encoding="utf-8")
    import_reviews(ws, reviews)
