"""Issue 22, cases 5 and 7: one bounded JSONL reader for imports and replay files. A device or a FIFO is
refused without being read (`import items /dev/zero` would never end), a line over the limit is skipped in
bounded memory with the following lines still numbered right, and a replay file with a non-UTF-8 line or JSON
nested 100,000 deep is refused as FILE:LINE, not a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checker.backends.replay import ReplayBackend
from checker.drafting import ReplayDrafter
from curation.errors import ValidationFailed
from curation.items import import_items
from curation.jsonl import MAX_LINE_BYTES, READ_CHUNK, read_jsonl
from curation.workspace import Workspace


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
