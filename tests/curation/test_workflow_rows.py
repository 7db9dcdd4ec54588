"""The derivation's fast reads (``fact_loading.item_rows``/``record_rows``: JSON columns as text, parsed by orjson where
it reads what ``json`` reads) give the values the ORM gives, on SQLite and PostgreSQL: an unpaired surrogate in a
record a server sent, integers past 64 bits in a kind's fields and a record's payload, and ``curate status`` reads
such a workspace."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from curation.derived import load_derived
from curation.fact_loading import item_rows, items_of_rows, load_records
from curation.items import import_items
from curation.reviews import PendingReview, record_reviews
from curation.schema import REVIEW_MODELS
from curation.split_derivation import derive_statuses
from curation.tables import Item, ReviewRecord
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items

SURROGATE_NOTE = "typed in a tool that split \ud83d from its pair"
BIG = {"revision": 2**70, "page": -(2**63) - 1, "ids": [12345678901234567890123, 7]}


def _spelled(value: object) -> str:
    """Equal spellings: equal values of equal types (an int read as a float would be spelled ``1e+21``)."""
    return json.dumps(value, sort_keys=True)


def _workspace(ws: Workspace, tmp_path: Path) -> Workspace:
    ws.add_person("ann1", ["author"])
    ws.add_person("rev1", ["reviewer"])
    import_items(ws, write_items(tmp_path / "in", [item_row("a"), item_row("b")]))
    # a record as the app or a Label Studio pull stores it: validated, but not read from a JSONL file
    review = REVIEW_MODELS["answer_check"].model_validate(
        {"item": "a", "stage": "answer_check", "reviewer": "rev1", "answer": "A", "note": SURROGATE_NOTE}
    )
    assert record_reviews(ws, [PendingReview(1, review)]).recorded == 1
    with ws.writing() as s:  # what a kind's free-form fields may hold (a story revise record's edits)
        s.add(
            ReviewRecord(subject="item:b", stage="grammar", reviewer="rev1", revision=1, inputs_hash="x", payload=BIG)
        )
        s.get(Item, "b").extra = BIG  # type: ignore[union-attr]
    return ws


def test_records_read_as_rows_are_the_records_the_orm_reads(workspace: Workspace, tmp_path: Path) -> None:
    ws = _workspace(workspace, tmp_path)
    with ws.session() as s:
        stored = {r.id: r.payload for r in s.execute(select(ReviewRecord)).scalars()}
        read = {r.id: r.payload for r in load_records(s)}
    assert sorted(read) == sorted(stored) and len(read) == 2
    assert [_spelled(read[k]) for k in sorted(read)] == [_spelled(stored[k]) for k in sorted(stored)]
    assert SURROGATE_NOTE in [p.get("note") for p in read.values()]
    assert {k: v for p in read.values() for k, v in p.items()}["revision"] == 2**70


def test_items_read_as_rows_keep_integers_past_64_bits(workspace: Workspace, tmp_path: Path) -> None:
    ws = _workspace(workspace, tmp_path)
    with ws.session() as s:
        facts = {f.id: f for f in items_of_rows(item_rows(s), {})}
        stored = s.get(Item, "b").extra  # type: ignore[union-attr]
    assert _spelled(dict(facts["b"].extra)) == _spelled(stored) == _spelled(BIG)


def test_status_reads_a_workspace_holding_them(workspace: Workspace, tmp_path: Path) -> None:
    ws = _workspace(workspace, tmp_path)
    statuses, _ = derive_statuses(ws)
    assert [st.id for st in statuses] == ["a", "b"]
    assert [st.as_json() for st in statuses] == [st.as_json() for st in load_derived(ws).statuses]
