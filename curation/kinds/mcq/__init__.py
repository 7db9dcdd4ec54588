"""The ``mcq`` kind: TRIAD-style multiple choice over a modality set ({text, image, audio} by default).

Stages, in order: grammar, image_screening (items with an AI-generated image only), audio_signoff (items
with audio only), subset_checklist, answer_check, and the group stage group_integration. Definition 1 holds over each item's own views. Each stage's separation rule is
TRIAD C.2's letters (``separation``); the answer check is blind (``curation.exposure``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...schema import ItemContent
from ...vocab import MODALITIES, modality_set
from .._parts import Kind, ReleaseLayout
from .._registry import register_kind
from .answer_check import AnswerCheck
from .audio_signoff import AudioSignoff
from .grammar import Grammar
from .group_integration import GroupIntegration
from .image_screening import ImageScreening
from .separation import ListenerSeparation, TriadGroupSeparation, TriadSeparation
from .subset_checklist import SubsetChecklist, combine_checklist, well_posedness_reasons

ITEM_COLUMNS = (
    "id",
    "group",
    "perturbed",
    "language",
    "context",
    "question",
    "options",
    "answer",
    "taxonomy_text",
    "taxonomy_image",
    "taxonomy_audio",
    "ambiguous",
    "tier",
    "image",
    "audio",
    "image_sha256",
    "audio_sha256",
    "image_source",
    "image_license",
    "audio_source",
    "audio_license",
    "image_note",
    "audio_note",
    "revision",
)
"""The release's item record of a TRIAD item: one row of data/items.parquet and one line of data/items.jsonl.
``image_note`` and ``audio_note`` (TRIAD's I+ / A+ descriptions, ``curation.notes``) are null where an item has
none, so a release of items without notes has them too, all null."""

_MODALITY_COLUMNS = {
    "text": ("context", "taxonomy_text"),
    "image": ("taxonomy_image", "image", "image_sha256", "image_source", "image_license", "image_note"),
    "audio": ("taxonomy_audio", "audio", "audio_sha256", "audio_source", "audio_license", "audio_note"),
}


def item_columns(modalities: Sequence[str]) -> tuple[str, ...]:
    """The record columns of a release whose items have these modalities: an absent modality's columns go."""
    absent = {c for m in MODALITIES if m not in modalities for c in _MODALITY_COLUMNS[m]}
    return tuple(c for c in ITEM_COLUMNS if c not in absent)


MCQ = register_kind(
    Kind(
        name="mcq",
        item_model=ItemContent,
        modalities=MODALITIES,
        default_modalities=MODALITIES,
        stages=[
            Grammar(TriadSeparation("grammar")),
            ImageScreening(),  # nobody screens their own item; no TRIAD letter of its own
            AudioSignoff(ListenerSeparation("audio_signoff")),
            SubsetChecklist(TriadSeparation("subset_checklist")),
            AnswerCheck(TriadSeparation("answer_check")),
            GroupIntegration(TriadGroupSeparation("group_integration")),
        ],
        gates=("media", "audit", "probe"),
        release=ReleaseLayout(
            data_files=("data/items.parquet", "data/items.jsonl"),
            columns=item_columns,
            unit_file="data/items.jsonl",
            media_fields=("image", "audio"),
            builder="exports.build:build_release",
        ),
        min_modalities=2,
    )
)

__all__ = ["ITEM_COLUMNS", "MCQ", "combine_checklist", "item_columns", "modality_set", "well_posedness_reasons"]
