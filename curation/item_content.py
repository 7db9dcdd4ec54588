"""The canonical content of an mcq item: what its content hash and its revisions are made of.

``canonical_content`` gives it for an item line as imported (media as content hashes), ``item_content`` for a
stored item; both have the same shape, so that an exported item imports as unchanged. Notes (TRIAD's A+ / I+
descriptions, :mod:`curation.notes`) are part of it only when the item has one: the content, and so the hash, of
an item without notes is what it was before notes existed.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .facts import canonical_json
from .notes import item_notes
from .schema import ItemContent
from .tables import Item
from .vocab import MODALITIES

CONTENT_FIELDS = (
    "id",
    "group",
    "perturbed",
    "language",
    "author",
    "context",
    "image",
    "audio",
    "question",
    "options",
    "answer",
    "taxonomy",
    "ambiguous",
    "provenance",
)
"""The canonical content of a TRIAD item (all three modalities) without notes, in order; ``notes`` follows when
the item has any."""


def canonical_content(content: ItemContent, image_sha: str | None, audio_sha: str | None) -> dict[str, Any]:
    """The stored form of an item: media replaced by content hashes, keys in a fixed order.

    A TRIAD item (all three modalities) keeps exactly the fields of ``CONTENT_FIELDS``; an item over another
    modality set also records ``modalities`` and has no field of a modality it lacks. An item with notes ends
    with ``notes`` (only the notes it has).
    """
    data = content.model_dump(mode="json")
    data["image"] = image_sha
    data["audio"] = audio_sha
    if content.has_default_modalities:
        out = {k: data[k] for k in CONTENT_FIELDS}
    else:
        for nested in ("taxonomy", "provenance"):
            data[nested] = {k: v for k, v in data[nested].items() if v is not None}
        fields = ("id", "group", "kind", "modalities", *CONTENT_FIELDS[2:])
        out = {k: data[k] for k in fields if data.get(k) is not None}
    if content.notes is not None:
        out["notes"] = content.notes.model_dump(mode="json", exclude_none=True)
    return out


def content_hash(canonical: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(canonical)).hexdigest()


def item_content(item: Item, perturbed: str) -> dict[str, Any]:
    """The canonical content of a stored item (same shape as ``canonical_content``)."""
    if item.modalities and tuple(item.modalities) != MODALITIES:
        has = item.modalities
        own = {
            "id": item.id,
            "group": item.group_id,
            "kind": item.kind,
            "modalities": list(has),
            "perturbed": perturbed,
            "language": item.language,
            "author": item.author,
            "context": item.context if "text" in has else None,
            "image": item.image,
            "audio": item.audio,
            "question": item.question,
            "options": item.options,
            "answer": item.answer,
            "taxonomy": item.taxonomy,
            "ambiguous": item.ambiguous,
            "provenance": item.provenance,
        }
        out: dict[str, Any] = {k: v for k, v in own.items() if v is not None}
    else:
        out = {
            "id": item.id,
            "group": item.group_id,
            "perturbed": perturbed,
            "language": item.language,
            "author": item.author,
            "context": item.context,
            "image": item.image,
            "audio": item.audio,
            "question": item.question,
            "options": item.options,
            "answer": item.answer,
            "taxonomy": item.taxonomy,
            "ambiguous": item.ambiguous,
            "provenance": item.provenance,
        }
    notes = item_notes(item.extra)
    if notes:
        out["notes"] = notes
    return out
