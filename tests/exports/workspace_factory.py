"""Workspaces whose items pass every review stage: the input release tests and the benchmark start from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curation.items import import_items
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
        records.append({"item": item, "stage": "grammar", "reviewer": "rev1", "verdict": "pass"})
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
            context=f"Sure, that was a really helpful suggestion about the {group} plan.",
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
    import_items(ws, write_items(folder, rows))
    reviews = folder / "reviews.jsonl"
    reviews.write_text("".join(json.dumps(r) + "\n" for r in admitting_reviews(rows)), encoding="utf-8")
    import_reviews(ws, reviews)
