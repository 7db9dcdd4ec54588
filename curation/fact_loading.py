"""Loading the derivation's facts: every item and review record read as plain rows on the session's connection
(no ORM object per row; JSON columns as text, parsed by orjson where it reads what ``json`` reads) and built into
``ItemFacts`` and ``RecordFacts``. The derivation, the split derivation and the review import read them here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

import orjson
from sqlalchemy import String, select, type_coerce
from sqlmodel import col

from .audio_production.credits import with_audio_people
from .authorship import former_authors
from .facts import ItemFacts, RecordFacts, json_column, json_reader
from .tables import Item, ReviewRecord, SceneGroup
from .vocab import MODALITIES


def item_rows(session) -> Sequence[Any]:  # type: ignore[no-untyped-def]
    """Every item as the plain row ``items_of_rows`` builds its facts from, in id order (read on the session's
    connection, without the ORM's per-row work). A row's first two columns are the item's id and group."""
    return (
        session.connection()
        .execute(
            select(
                col(Item.id),
                col(Item.group_id),
                col(Item.author),
                col(Item.revision),
                col(Item.context),
                col(Item.question),
                type_coerce(col(Item.options), String),  # JSON columns as raw text, parsed when built
                col(Item.answer),
                col(Item.image),
                col(Item.audio),
                type_coerce(col(Item.provenance), String),
                col(Item.content_hash),
                col(Item.kind),
                type_coerce(col(Item.modalities), String),
                type_coerce(col(Item.extra), String),
            ).order_by(col(Item.id))
        )
        .all()
    )


def items_of_rows(rows: Iterable[Any], former: Mapping[str, frozenset[str]]) -> list[ItemFacts]:
    """The facts of ``item_rows``'s rows; ``former``: item -> its former authors (``former_authors``)."""
    rows = rows if isinstance(rows, Sequence) else list(rows)
    loads = json_reader(text for r in rows for text in (r[6], r[10], r[13], r[14]) if type(text) is str)
    items = []
    for r in rows:
        provenance = json_column(r[10], loads) or {}
        modalities = json_column(r[13], loads)
        items.append(
            ItemFacts(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                json_column(r[6], loads),
                r[7],
                r[8] or "",
                r[9] or "",
                provenance.get("audio", {}).get("source", ""),
                r[11],
                r[12],
                tuple(modalities) if modalities else MODALITIES,
                with_audio_people(json_column(r[14], loads) or {}, provenance),
                image_source=provenance.get("image", {}).get("source", ""),
                former_authors=former.get(r[0], frozenset()),
            )
        )
    return items


def perturbed_modalities(session) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Group -> the modality its items perturb."""
    return dict(session.execute(select(col(SceneGroup.id), col(SceneGroup.perturbed))).all())


def load_facts(session) -> tuple[list[ItemFacts], dict[str, str]]:  # type: ignore[no-untyped-def]
    """Items as plain facts, in id order, with their groups' perturbed modality."""
    return items_of_rows(item_rows(session), former_authors(session)), perturbed_modalities(session)


def record_rows(session) -> Sequence[Any]:  # type: ignore[no-untyped-def]
    """Every review record as the plain row ``records_of_rows`` builds its facts from (read as ``item_rows``
    reads items). A row's first column is the record's subject."""
    return (
        session.connection()
        .execute(
            select(
                col(ReviewRecord.subject),
                col(ReviewRecord.stage),
                col(ReviewRecord.reviewer),
                col(ReviewRecord.revision),
                col(ReviewRecord.inputs_hash),
                type_coerce(col(ReviewRecord.payload), String),
                col(ReviewRecord.id),
            )
        )
        .all()
    )


def records_of_rows(rows: Sequence[Any]) -> list[RecordFacts]:
    """The facts of ``record_rows``'s rows; payloads are parsed as ``json.loads`` would, by orjson where it
    reads the same (``facts.json_reader``: the bulk of the cost at 70k records). PostgreSQL's driver hands JSON
    over already parsed."""

    def built(loads: Callable[[str], Any]) -> list[RecordFacts]:
        return [
            RecordFacts(r[0], r[1], r[2], r[3], r[4], r[5] if isinstance(r[5], dict) else loads(r[5]), r[6])
            for r in rows
        ]

    try:
        # SQLite hands every payload over as text (the column is NOT NULL), PostgreSQL's driver none
        return built(json_reader(map(itemgetter(5), rows) if rows and type(rows[0][5]) is str else ()))
    except orjson.JSONDecodeError:  # NaN or an unpaired surrogate, written by json: read by json
        return built(json.loads)


def load_records(session) -> list[RecordFacts]:  # type: ignore[no-untyped-def]
    """All review records."""
    return records_of_rows(record_rows(session))
