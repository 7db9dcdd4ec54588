"""Issue 22, cases 5 and 7: one bounded JSONL reader for imports and replay files. A device or a FIFO is
refused without being read (`import items /dev/zero` would never end), a line over the limit is skipped in
bounded memory with the following lines still numbered right, and a replay file with a non-UTF-8 line or JSON
nested 100,000 deep is refused as FILE:LINE, not a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from checker.backends.replay import ReplayBackend
from checker.drafting import ReplayDrafter
from curation.errors import Problem, ValidationFailed
from curation.items import import_items
from curation.jsonl import MAX_LINE_BYTES, READ_CHUNK, field_name, parse_line, read_jsonl, validate_line
from curation.workspace import Workspace
from tests.hostile_text import characters, framed


def test_import_items_refuses_a_device_and_a_fifo_without_reading(workspace: Workspace, tmp_path: Path) -> None:
    with pytest.raises(ValidationFailed, match="/dev/zero: is a device, not a regular file"):
        import_items(workspace, Path("/dev/zero"))
    fifo = tmp_path / "items.jsonl"
    os.mkfifo(fifo)  # nobody writes to it: reading would block for ever
    with pytest.raises(ValidationFailed, match=r"items.jsonl: is a FIFO \(a named pipe\), not a regular file"):
        import_items(workspace, fifo)


def test_an_overlong_line_is_skipped_and_later_lines_keep_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    huge = b'{"a": "' + b"x" * (3 * READ_CHUNK) + b'"}'
    path.write_bytes(b'{"n": 1}\n' + huge + b'\n{"n": 3}\r\n\n{"n": 5}')
    found = list(read_jsonl(path))
    assert [n for n, _ in found] == [1, 2, 3, 5]
    assert found[0][1] == {"n": 1} and found[2][1] == {"n": 3} and found[3][1] == {"n": 5}
    assert str(found[1][1]) == (
        f"{path}:2: line of {len(huge):,} bytes exceeds the limit of {MAX_LINE_BYTES:,}; shorten its text"
    )


def test_a_line_exactly_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "edge.jsonl"
    line = b'{"a": "' + b"y" * (MAX_LINE_BYTES - 9) + b'"}'
    assert len(line) == MAX_LINE_BYTES
    path.write_bytes(line + b"\n")
    [(number, obj)] = list(read_jsonl(path))
    assert number == 1 and not isinstance(obj, dict)  # the 1 MiB text is over the 20,000-character limit
    assert "text longer than the limit" in str(obj)


@pytest.mark.parametrize(
    ("bad", "message"),
    [(b'{"task": "\xff"}', "not UTF-8 text"), (b"[" * 100_000 + b"]" * 100_000, "nested too deeply")],
)
def test_replay_files_name_file_and_line(tmp_path: Path, bad: bytes, message: str) -> None:
    drafts = tmp_path / "drafts.jsonl"
    drafts.write_bytes(b'{"task": "t1", "checklist": []}\n' + bad + b"\n")
    with pytest.raises(ValidationFailed) as exc:
        ReplayDrafter(str(drafts))
    assert f"{drafts}:2: " in str(exc.value) and message in str(exc.value)
    probes = tmp_path / "probes.jsonl"
    probes.write_bytes(bad + b"\n")
    with pytest.raises(ValidationFailed) as exc:
        ReplayBackend(str(probes))
    assert f"{probes}:1: " in str(exc.value) and message in str(exc.value)


# ----- issue 40: keys given twice, keys that hold a line break ---------------------------------------------------
keys = st.one_of(framed(), st.sampled_from(["", "a", "a.b", '"', "\\", " :", '":', "\\u0022"]))
objects = st.recursive(
    st.one_of(st.integers(-5, 5), st.text(characters, max_size=6), st.sampled_from(['":', '\\":', " : "])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
).filter(lambda v: isinstance(v, dict))


def _with_twice(obj: dict[str, Any], key: str, spaced: bool) -> str:
    """OBJ as a JSON line whose top-level KEY is given a second time (last), ``" :"``-spaced or not."""
    body = json.dumps(obj)[1:-1]
    second = f"{json.dumps(key)}{' :' if spaced else ':'} 0"
    return "{" + (f"{body}, {second}" if body else second) + "}"


@settings(max_examples=300, deadline=None)
@given(objects, st.booleans())
def test_both_parsers_agree_and_never_take_a_key_given_twice(obj: dict[str, Any], spaced: bool) -> None:
    """orjson's fast path (a count of ``":`` against the keys it parsed) refuses exactly what json's object hook
    refuses: nothing in a line without a repeated key, whatever its strings hold; every repeated key, named."""
    line = json.dumps(obj, ensure_ascii=False).encode("utf-8", errors="surrogatepass")
    for loads in (json.loads, orjson.loads):
        parsed = parse_line(line, "f.jsonl", 1, loads, max_text=None)
        assert parsed == obj or (isinstance(parsed, Problem) and "given twice" not in parsed.message)
    if obj:
        key = next(iter(obj))
        twice = _with_twice(obj, key, spaced).encode("utf-8", errors="surrogatepass")
        for loads in (json.loads, orjson.loads):
            found = parse_line(twice, "f.jsonl", 1, loads, max_text=None)
            assert isinstance(found, Problem) and found.field == field_name(key), (loads, found)
            assert found.message == "given twice in one object; keep one of them"


@settings(max_examples=300, deadline=None)
@given(keys)
def test_a_problem_naming_any_key_stays_one_line(key: str) -> None:
    """An unknown key, a NaN under a key, a key given twice: the key is shown JSON-escaped where it could split or
    blur the FILE:LINE: field: problem line (a line break, a dot, a quote), as it is elsewhere."""

    class Model(BaseModel):
        model_config = ConfigDict(extra="forbid")  # every key is unknown

    shown = field_name(key)
    assert len(shown.splitlines()) == 1 and shown.isprintable()
    assert shown == key or json.loads(shown) == key.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    for line in (
        json.dumps({key: 1}),
        json.dumps({"a": {key: float("nan")}}),
        f"{{{json.dumps(key)}: 1, {json.dumps(key)}: 2}}",
    ):
        problem = parse_line(line.encode("utf-8", "surrogatepass"), "f.jsonl", 7)
        problems = [problem] if isinstance(problem, Problem) else validate_line(Model, problem, "f.jsonl", 7)  # type: ignore[arg-type]
        assert problems, line
        for p in problems:
            assert str(p).startswith("f.jsonl:7: ") and len(str(p).splitlines()) == 1, str(p)
