"""The ``story_transition`` kind (Omni-StoryBench): page-to-page transitions screened from candidates, then
two human stages — ``filter`` (keep or drop, App. D Fig. 10) and ``revise`` (edit the model's annotation,
Fig. 11) — and the App. C audits as gates (``story_audit`` blocks, ``story_overlap`` warns).

The item's own fields (next page, annotations, the model's proposals, who revised what) live in
``item.extra``; ``context`` and ``image`` hold the current page.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...screening.schema import StoryTransition
from .._parts import Kind, ReleaseLayout
from .._registry import register_kind
from .stages import Filter, Revise

TRANSITION_COLUMNS = (
    "id",
    "book",
    "page",
    "title",
    "collection",
    "license",
    "current_text",
    "current_image",
    "next_text",
    "next_image",
    "book_meta",
    "conditions",
    "speech",
    "provenance",
    "revision",
    "duplicate_clusters",
    "origin",
)
"""One line of the release's ``data/transitions.jsonl`` (and one row of ``data/transitions.parquet``)."""


def transition_columns(modalities: Sequence[str]) -> tuple[str, ...]:
    return TRANSITION_COLUMNS


STORY = register_kind(
    Kind(
        name="story_transition",
        item_model=StoryTransition,
        modalities=("text", "image"),
        default_modalities=("text", "image"),
        stages=[Filter(), Revise()],
        gates=("story_audit", "story_overlap"),
        release=ReleaseLayout(
            data_files=("data/transitions.jsonl", "data/transitions.parquet"),
            columns=transition_columns,
            unit_file="data/transitions.jsonl",
            media_fields=("current_image", "next_image"),
            builder="exports.story_release:build_story_release",
        ),
        min_modalities=2,
        has_answer=False,
    )
)

__all__ = ["STORY", "TRANSITION_COLUMNS"]
