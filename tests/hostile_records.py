"""Hypothesis strategies for hostile JSON Lines: a valid record with one field made hostile (a bool or a string
where a number goes, NaN, Infinity, a huge number, an unknown field, a missing one, a NUL, an unpaired surrogate,
an over-long text, deep nesting), or a line that is not a record at all (invalid JSON, not UTF-8, a bare array).

A test writes the lines with :func:`encode` and asserts that the reader either takes the file or refuses it with
exit code 2 and every problem as ``FILE:LINE`` (:func:`assert_named_refusal`), never a traceback.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.hostile_text import framed

NAN, INF = math.nan, math.inf
"""Written as the bare tokens ``NaN`` and ``Infinity`` by :func:`encode` (JSON has neither)."""

scalars: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from(
        [True, False, None, "", " ", "\t", "4", "1.0", "true", "NaN", 0, -1, 3.0, 6, 1.5, -0.0, NAN, INF, -INF]
    ),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    framed(),
    st.sampled_from(["\x00", "A\x00Z", "\ud800", "A\udfffZ"]),
    st.integers(min_value=20_001, max_value=20_005).map(lambda n: "x" * n),
)
"""Values a strict field must refuse (or, for a text field, may take): bools, numbers as text, NaN, Infinity,
huge integers, NUL, unpaired surrogates, a text over the 20,000-character limit, hostile Unicode."""

values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(framed(), st.sampled_from(["", "A", "E"])), inner, max_size=3),
    ),
    max_leaves=6,
)


def deep(levels: int = 2_000) -> str:
    return "[" * levels + "]" * levels


junk_lines: st.SearchStrategy[bytes] = st.one_of(
    st.sampled_from(
        [
            b"[]",
            b"1",
            b'"text"',
            b"null",
            b"{",
            b'{"a": 1,}',
            b"\xff\xfe{}",
            b'{"id": "\xc3"}',
            b"{'single': 'quotes'}",
            ('{"x": ' + deep() + "}").encode(),
        ]
    ),
    st.binary(max_size=40).filter(lambda b: b"\n" not in b),
)
"""Whole lines that are not a JSON object (refused before any field is looked at)."""


def mutated(base: dict[str, Any], paths: list[tuple[str, ...]]) -> st.SearchStrategy[dict[str, Any]]:
    """``base`` with one of ``paths`` set to a hostile value or removed, or an unknown field added."""

    def apply(choice: tuple[str, tuple[str, ...], Any]) -> dict[str, Any]:
        action, path, value = choice
        record = json.loads(json.dumps(base))
        if action == "extra":
            record[f"unknown_{abs(hash(str(value))) % 97}"] = value
            return record
        holder = record
        for key in path[:-1]:
            holder = holder.setdefault(key, {}) if isinstance(holder, dict) else holder
        if not isinstance(holder, dict):
            return record
        if action == "drop":
            holder.pop(path[-1], None)
        else:
            holder[path[-1]] = value
        return record

    return st.tuples(st.sampled_from(["set", "set", "set", "drop", "extra"]), st.sampled_from(paths), values).map(apply)


def encode(record: Any, ascii_only: bool = True) -> bytes:
    """One line as bytes: NaN and Infinity as their bare tokens, unpaired surrogates as ``\\ud800`` escapes (or,
    with ``ascii_only=False``, as the bytes of a surrogate, which are not UTF-8)."""
    text = json.dumps(record, ensure_ascii=ascii_only, allow_nan=True)
    return text.encode("utf-8", errors="surrogatepass")


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


TRACEBACK = re.compile(r"Traceback|Error\(|Exception\(|<[a-zA-Z_.]+ object at 0x")


def assert_named_refusal(output: str, file: Path, lines: int, is_summary: Callable[[str], bool] | None = None) -> None:
    """Every problem of a refused file reads ``FILE:LINE: ...`` (or ``FILE: ...`` for the file as a whole) with a
    line of the file; the rest is the one-line summary; nothing is a traceback or a Python repr of an error."""
    assert not TRACEBACK.search(output), output
    problems = [line for line in output.split("\n") if line.startswith(str(file))]
    assert problems, output
    for problem in problems:
        found = re.match(re.escape(str(file)) + r"(?::(\d+))?: ", problem)
        assert found, problem
        if found.group(1) is not None:
            assert 1 <= int(found.group(1)) <= lines, problem
    rest = [line for line in output.split("\n") if not line.startswith(str(file)) and line.strip()]
    continuation = [line for line in rest if not (is_summary or _summary)(line)]
    assert not continuation or all(line.startswith(" ") for line in continuation), output


def _summary(line: str) -> bool:
    return line.startswith("error:") or "nothing was" in line or "problem(s)" in line
