"""Review records that admit TRIAD items: one passing record per reviewer and stage, and group reviews."""

from __future__ import annotations

from typing import Any

from curation.exclusion_rules import TRIAD_RULES

GRAMMAR = ("rev1", "rev2")
"""TRIAD C.2's B: two grammar reviewers sign off (§4.2)."""
LISTENERS = ("rev3", "rev4")
"""C: the audio listeners."""
CHECKLIST = ("rev1", "rev3", "rev5")
"""Subset-checklist reviewers hold B, C or D on the item (TRIAD C.2.4), never A or E."""
BLIND = "rev5"
"""D: the blind answer checker."""
GROUP = "rev6"
"""E: the group reviewer."""
REVIEWERS = ("rev1", "rev2", "rev3", "rev4", "rev5", "rev6")
"""Everyone above: distinct people per role, as ``[review] separation = "triad"`` (the default) wants."""
PASSING_EXCLUSIONS: dict[str, str] = {rule: "pass" for rule in TRIAD_RULES}
"""A checklist record's attestations that pass every default exclusion rule (``[review] exclusion_rules``):
without them a checklist record leaves its item held (``exclusion_unattested:<rule>``)."""


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
    """One passing record per reviewer and stage for every item, and a passing group review per group, with
    TRIAD's separation of roles (see the names above)."""
    records: list[dict[str, Any]] = []
    for row in rows:
        item = row["id"]
        for reviewer in GRAMMAR:  # grammar: two reviewers sign off (TRIAD §4.2)
            records.append({"item": item, "stage": "grammar", "reviewer": reviewer, "verdict": "pass"})
        for reviewer in LISTENERS:
            scores = {"naturalness": 4, "clarity": 5, "artefacts": 4}
            records.append({"item": item, "stage": "audio_signoff", "reviewer": reviewer, "scores": scores})
        for reviewer in CHECKLIST:
            consistent = consistent_sets(row["answer"])
            records.append(
                {
                    "item": item,
                    "stage": "subset_checklist",
                    "reviewer": reviewer,
                    "consistent": consistent,
                    "exclusions": dict(PASSING_EXCLUSIONS),
                }
            )
        records.append({"item": item, "stage": "answer_check", "reviewer": BLIND, "answer": row["answer"]})
    for group in sorted({row["group"] for row in rows}):
        records.append({"group": group, "stage": "group_integration", "reviewer": GROUP, "verdict": "pass"})
    return records
