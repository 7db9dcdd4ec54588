"""The card's list of AI-generated images and their artefact screenings (TRIAD §4.2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

STAGE = "image_screening"


def screened_images(items: Sequence[dict[str, Any]], admission: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per released AI-generated image: its file, the items that show it, and their screenings' verdicts."""
    stages = {a["id"]: a["stages"] for a in admission}
    images: dict[str, dict[str, Any]] = {}
    for item in items:
        if item.get("image_source") != "ai_generated" or not item.get("image"):
            continue
        entry = images.setdefault(item["image"], {"image": item["image"], "items": [], "screenings": []})
        entry["items"].append(item["id"])
        summary = stages.get(item["id"], {}).get(STAGE)
        entry["screenings"].append(summary["verdicts"] if summary else {})
    return [images[path] for path in sorted(images)]


def card_lines(items: Sequence[dict[str, Any]], admission: Sequence[dict[str, Any]]) -> list[str]:
    found = screened_images(items, admission)
    if not found:
        return []
    out = ["", "AI-generated images, with their items' passing artefact screenings (`image_screening` records):", ""]
    for entry in found:
        passes = [verdicts.get("pass", 0) for verdicts in entry["screenings"]]
        out.append(
            f"- `{entry['image']}` (items {', '.join(entry['items'])}): "
            f"{min(passes) if passes else 0} passing screening(s) per item"
        )
    return out
