"""Workspaces whose items pass every review stage: the input release tests and the benchmark start from."""

from __future__ import annotations

import io
import json
import random
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
from tests.media_factory import item_row, write_items

REVIEWERS = ("rev1", "rev2", "rev3")


def consistent_sets(answer: str) -> dict[str, list[str]]:
    """Checklist sets satisfying TRIAD Definition 1 for answer A or B (options A-D)."""
    other = "B" if answer == "A" else "A"
    return {
        "text": ["A", "B", "C"],
        "image": ["A", "B", "C"],
        "audio": ["A", "B"],
        "text+image": sorted([answer, other]),
        "text+audio": sorted([answer, "C"]),
        "image+audio": ["A", "B"],
        "text+image+audio": [answer],
    }


def admitting_reviews(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One passing record per reviewer and stage for every item, and a passing group review per group."""
    records: list[dict[str, Any]] = []
    for row in rows:
        item = row["id"]
        for reviewer in REVIEWERS[:2]:  # grammar: two reviewers sign off (TRIAD §4.2)
            records.append({"item": item, "stage": "grammar", "reviewer": reviewer, "verdict": "pass"})
        for reviewer in REVIEWERS[:2]:
            scores = {"naturalness": 4, "clarity": 5, "artefacts": 4}
            records.append({"item": item, "stage": "audio_signoff", "reviewer": reviewer, "scores": scores})
        for reviewer in REVIEWERS:
            consistent = consistent_sets(row["answer"])
            records.append({"item": item, "stage": "subset_checklist", "reviewer": reviewer, "consistent": consistent})
        records.append({"item": item, "stage": "answer_check", "reviewer": "rev3", "answer": row["answer"]})
    for group in sorted({row["group"] for row in rows}):
        records.append({"group": group, "stage": "group_integration", "reviewer": "rev2", "verdict": "pass"})
    return records


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
