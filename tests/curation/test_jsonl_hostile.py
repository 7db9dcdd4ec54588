"""Issue 40, the shared bounded reader (curation.jsonl) under generated hostile lines: NaN and Infinity, nesting
from 1 to 300 levels, numbers of up to 400 digits, invalid UTF-8, a byte-order mark on any line, raw and escaped
control characters, lone surrogates, unknown fields, wrong types, truncation, top-level non-objects. Every line is
either read cleanly or refused as ``FILE:LINE: ...`` in words (never a traceback, never a Python repr), whichever
JSON parser reads it; through ``import items``, on both databases, a file is imported whole or refused whole."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict
from sqlalchemy import func, select

from curation.errors import Problem, ValidationFailed
from curation.items import import_items
from curation.jsonl import MAX_DEPTH, MAX_INTEGER, parse_line, read_models, structure_problem
from curation.tables import Item
from curation.workspace import Workspace
from devsupport.media_factory import item_row, write_items

BASE: dict[str, Any] = {"id": "a1", "n": 3, "note": "plain", "extra": {"k": [1, 2.5, None, True]}}


class Line(BaseModel):
    """A strict line model: what every reader's model is (no coercion, no unknown field)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    id: str
    n: int = 0
    note: str = ""
    extra: dict[str, Any] = {}


def _nested(levels: int, inner: str = "1", kind: str = "[") -> str:
    close = "]" if kind == "[" else "}"
    opening = "[" if kind == "[" else '{"a": '
    return opening * levels + inner + close * levels


def _set(obj: dict[str, Any], key: str, raw: str) -> bytes:
    """``obj`` as JSON with ``key`` given the raw JSON text ``raw`` (which need not be valid JSON)."""
    marker = "\u0001MARK\u0001"
    return json.dumps({**obj, key: marker}).replace(json.dumps(marker), raw).encode()


MUTATIONS: dict[str, Callable[[st.DataObject], bytes]] = {
    "nan": lambda d: _set(
        BASE,
        d.draw(st.sampled_from(["n", "note", "x"])),
        d.draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "[1, NaN]", '{"v": -Infinity}'])),
    ),
    "deep": lambda d: _set(
        BASE,
        "extra",
        _nested(d.draw(st.integers(1, 300)), kind=d.draw(st.sampled_from(["[", "{"]))).join(['{"d": ', "}"]),
    ),
    "huge_int": lambda d: _set(
        BASE,
        d.draw(st.sampled_from(["n", "extra"])),
        d.draw(st.sampled_from(["", "-"])) + "9" * d.draw(st.integers(15, 400)),
    ),
    "huge_float": lambda d: _set(BASE, "n", f"{d.draw(st.integers(1, 9))}e{d.draw(st.integers(290, 999))}"),
    "invalid_utf8": lambda d: (
        json.dumps(BASE)
        .encode()
        .replace(
            b"plain",
            d.draw(st.sampled_from([b"\xff", b"pl\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80"])),
        )
    ),
    "bom": lambda d: b"\xef\xbb\xbf" + json.dumps(BASE).encode(),
    "control_raw": lambda d: (
        json.dumps(BASE).encode().replace(b"plain", bytes([d.draw(st.integers(0, 31).filter(lambda c: c != 10))]))
    ),
    "control_escaped": lambda d: _set(
        BASE, "note", json.dumps(d.draw(st.text(st.characters(max_codepoint=31), min_size=1, max_size=5)))
    ),
    "surrogate": lambda d: _set(
        BASE,
        d.draw(st.sampled_from(["note", "extra"])),
        d.draw(st.sampled_from(['"\\ud800"', '"a\\udfffb"', '{"\\ud83d": 1}'])),
    ),
    "unknown_field": lambda d: _set(BASE, d.draw(st.text("abcxyz_", min_size=1, max_size=8)).join(["u_", ""]), "1"),
    "wrong_type": lambda d: _set(
        BASE,
        d.draw(st.sampled_from(["n", "id", "note", "extra"])),
        d.draw(st.sampled_from(["true", '"3"', "3.0", "null", "[]", "{}"])),
    ),
    "truncated": lambda d: (lambda raw: raw[: d.draw(st.integers(1, len(raw) - 1))])(json.dumps(BASE).encode()),
    "not_an_object": lambda d: d.draw(st.sampled_from([b"[]", b"3", b'"x"', b"null", b"true", b"[{}]"])),
    "clean": lambda d: json.dumps(BASE).encode() + d.draw(st.sampled_from([b"", b"\r", b"   "])),
}
"""One generator per kind of hostile line (14, "clean" included): each draws its variant."""


@st.composite
def hostile_file(draw: st.DrawFn) -> list[tuple[str, bytes]]:
    kinds = draw(st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=1, max_size=5))
    data = draw(st.data())
    return [(kind, MUTATIONS[kind](data)) for kind in kinds]


EXPECTED = {
    "nan": "not a number JSON allows",
    "invalid_utf8": "not UTF-8 text",
    "not_an_object": "each line must be a JSON object",
    "surrogate": "unpaired surrogate",
    "control_raw": "invalid JSON: Invalid control character",
}
"""What refuses a line of these kinds, whatever the variant drawn."""


def _plain(problem: Problem, path: Path, lines: int) -> None:
    text = str(problem)
    assert problem.file == str(path) and problem.line is not None and 1 <= problem.line <= lines, text
    assert text.startswith(f"{path}:{problem.line}: "), text
    for repr_marker in ("Traceback", "<class", " object at 0x", "Error(", "sys.set_int_max_str_digits"):
        assert repr_marker not in text, text


def _bounded(value: Any, depth: int = 1) -> None:
    """What a clean line holds: no NaN or infinity, integers within 64 bits, nesting within MAX_DEPTH (objects and
    lists count as levels, the line's own object being level 1; a number or a string inside the deepest is no
    level of its own)."""
    if isinstance(value, dict):
        assert depth <= MAX_DEPTH
        for item in value.values():
            _bounded(item, depth + 1)
    elif isinstance(value, list):
        assert depth <= MAX_DEPTH
        for item in value:
            _bounded(item, depth + 1)
    elif isinstance(value, float):
        assert math.isfinite(value)
    elif isinstance(value, int):
        assert abs(value) <= MAX_INTEGER


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=hostile_file())
def test_every_hostile_line_is_read_cleanly_or_named_by_file_and_line(
    tmp_path: Path, drawn: list[tuple[str, bytes]]
) -> None:
    raw_lines = [raw for _, raw in drawn]
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"\n".join(raw_lines) + b"\n")
    problems: list[Problem] = []
    read = list(read_models(path, Line, problems))
    for problem in problems:
        _plain(problem, path, len(raw_lines))
    refused = {p.line for p in problems}
    assert not refused & {n for n, _ in read}, "a line is read or refused, never both"
    for _, line in read:
        _bounded(line.model_dump())
    for number, (kind, raw) in enumerate(drawn, 1):
        by_json = parse_line(raw, str(path), number)
        by_orjson = parse_line(raw, str(path), number, orjson.loads)  # the candidates' parser says the same
        assert by_json == by_orjson, (raw[:200], by_json, by_orjson)
        mine = [str(p) for p in problems if p.line == number]
        if kind in EXPECTED:
            assert any(EXPECTED[kind] in p for p in mine), (raw[:200], mine)
        elif kind == "clean" or (kind == "bom" and number == 1):
            assert number in {n for n, _ in read}, (raw[:200], mine)
        elif kind == "deep":
            levels = raw.count(b"[") + raw.count(b"{") - 2  # the line's own object and "extra"
            assert (number in refused) == (levels > MAX_DEPTH - 2), (levels, mine)
        elif kind == "huge_int" and b"9" * 19 in raw:  # 19 nines: past 9,223,372,036,854,775,807
            assert any("too large" in p for p in mine), (raw[:200], mine)
        elif kind in ("huge_float", "unknown_field", "truncated", "bom"):
            assert number in refused, (raw[:200], mine)


def test_the_bounds_themselves() -> None:
    """The edges: 32 levels and 2**63-1 are read; 33 levels, 2**63, NaN and 1e309 are refused by field."""
    assert structure_problem(json.loads(_nested(MAX_DEPTH - 1, kind="{")), "{" * 40) is None
    assert structure_problem({"a": json.loads(_nested(MAX_DEPTH))}, "[" * 40) == (
        f"nested too deeply (at most {MAX_DEPTH} levels); flatten it",
        "a" + ".0" * (MAX_DEPTH - 1),
    )
    assert structure_problem({"n": MAX_INTEGER, "m": -MAX_INTEGER}, "9" * 19) is None
    assert structure_problem({"n": MAX_INTEGER + 1}, "9" * 19) is not None
    for raw in (b'{"v": NaN}', b'{"v": 1e309}', b'{"v": [-Infinity]}'):
        problem = parse_line(raw, "f.jsonl", 7)
        assert (
            isinstance(problem, Problem) and str(problem).startswith("f.jsonl:7: v") and "JSON allows" in str(problem)
        )


@pytest.fixture
def item_folder(tmp_path: Path) -> Path:
    write_items(tmp_path / "in", [item_row("a1"), item_row("a2")])
    return tmp_path / "in"


def _item_line(data: st.DataObject, index: int) -> bytes:
    """An item line, clean or with one hostile part: where the reader's tests put it, in a real item."""
    row = item_row(f"h{index}")
    kind = data.draw(st.sampled_from(["clean", "nan", "deep", "huge", "unknown", "bool", "control", "utf8", "bom"]))
    extra = row["provenance"]["image"]
    if kind == "clean":
        return json.dumps(row).encode()
    if kind == "nan":
        return _set(row, "provenance", json.dumps(row["provenance"]).replace('"photo"', '"photo", "x": NaN'))
    if kind == "deep":
        extra["deep"] = json.loads(_nested(data.draw(st.integers(1, 60)), kind="{"))
    elif kind == "huge":
        extra["n"] = int("9" * data.draw(st.integers(18, 60)))
    elif kind == "unknown":
        row["colour"] = "red"
    elif kind == "bool":
        row["options"] = {"A": True, "B": "b"}
    elif kind == "control":
        row["question"] = "Why\x07?"
    raw = json.dumps(row).encode()
    if kind == "utf8":
        return raw.replace(b"Sure", b"S\xffre")
    return b"\xef\xbb\xbf" + raw if kind == "bom" else raw


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_an_items_file_of_hostile_lines_is_imported_whole_or_refused_whole(
    workspace: Workspace, item_folder: Path, data: st.DataObject
) -> None:
    if workspace.people() == []:
        workspace.add_person("ann1", ["author"])
    lines = [_item_line(data, n) for n in range(data.draw(st.integers(1, 4)))]
    path = item_folder / "hostile.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with workspace.session() as s:
        before = int(s.execute(select(func.count()).select_from(Item)).scalar_one())
    try:
        report = import_items(workspace, path)
    except ValidationFailed as exc:
        assert exc.problems
        for problem in exc.problems:
            _plain(problem, path, len(lines))
        with workspace.session() as s:
            assert int(s.execute(select(func.count()).select_from(Item)).scalar_one()) == before
        return
    assert len(report.created) + len(report.revised) + len(report.unchanged) == len(lines)
