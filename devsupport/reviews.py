"""Review records that admit TRIAD items: one passing record per reviewer and stage, and group reviews."""

from __future__ import annotations

from typing import Any

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
