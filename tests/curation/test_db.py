"""How JSON columns are written (``curation.db.stored_json``): orjson where it keeps the value, ``json`` where
it would not, and every value reads back as it was written, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import col

from curation.db import stored_json
from curation.tables import Event
from curation.workspace import Workspace, record_event


class Level(enum.IntEnum):
    LOW = 1


ROUND_TRIPS = [
    {"context": "语境：雨夜。", "options": {"A": "雷声", "B": "ü", "C": "tab\there\u2028"}},
    {"nested": [1, -(2**63), 2**63 - 1, True, False, "", [], {}], "float": 0.1, "big float": 1e16},
    {"with none": None, "text": "null"},
    {"past 64 bits": 2**64, "negative": -(2**70)},
    {1: "integer key", "b": "text key"},
    {"level": Level.LOW},
    ["a tuple as a list", (1, 2)],
    "plain text",
    None,
]


@pytest.mark.parametrize("value", ROUND_TRIPS)
def test_every_value_reads_back_as_json_would_have_stored_it(value: Any) -> None:
    assert json.loads(stored_json(value)) == json.loads(json.dumps(value))


def test_plain_values_are_written_by_orjson() -> None:
    assert stored_json({"A": "雷声", "n": [1, 2]}) == '{"A":"雷声","n":[1,2]}'  # json would escape and space it


@pytest.mark.parametrize("value", [math.nan, {"loudness": -math.inf}, [math.inf]])
def test_what_orjson_would_write_as_null_is_written_by_json(value: Any) -> None:
    written = stored_json(value)
    assert written == json.dumps(value)
    assert "null" not in written


@pytest.mark.parametrize("value", [{"at": dt.datetime(2026, 12, 1)}, {"a set": {1}}, {"bytes": b"x"}])
def test_what_json_refuses_is_still_refused(value: Any) -> None:
    with pytest.raises(TypeError):
        stored_json(value)


def test_a_json_column_keeps_its_value_in_the_database(make_workspace: Callable[[str], Workspace]) -> None:
    ws = make_workspace("ws")
    after = {"context": "语境：雨夜。", "counts": [0, 2**63 - 1], "ratio": 0.1, "none": None, "nested": {"ü": True}}
    with ws.writing() as s:
        record_event(s, "ann1", "test.json", "item:x", {"old": "旧"}, after)
    with ws.session() as s:
        before_read, after_read = s.execute(
            select(col(Event.before), col(Event.after)).where(col(Event.action) == "test.json")
        ).one()
    assert (before_read, after_read) == ({"old": "旧"}, after)
