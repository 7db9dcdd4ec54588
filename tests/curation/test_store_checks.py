"""A store check stands for a file's bytes only while nothing about the file has changed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from curation.store_checks import RACY_S, checked_files, record_checked, settled, stat_key, vouched
from curation.workspace import Workspace


def test_any_write_changes_the_key_even_with_the_same_size_and_mtime(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"abcd")
    before = path.stat()
    time.sleep(0.01)
    path.write_bytes(b"abce")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert stat_key(path.stat()) != stat_key(before)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert stat_key(path.stat()).split(":")[:4] == stat_key(before).split(":")[:4]  # only the change time tells


def test_a_file_changed_just_now_is_not_settled(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"x")
    st = path.stat()
    assert not settled(st)
    assert settled(st, now=st.st_ctime_ns / 1e9 + RACY_S)


def test_checks_are_remembered_and_replaced(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "ws")
    try:
        assert checked_files(ws) == {}
        record_checked(ws, {"a" * 64: "1:2:3:4:5", "b" * 64: "1:2:3:4:6"})
        record_checked(ws, {"a" * 64: "1:9:3:4:5"})
        assert checked_files(ws) == {"a" * 64: "1:9:3:4:5", "b" * 64: "1:2:3:4:6"}
    finally:
        ws.close()


def test_a_file_is_vouched_for_only_if_settled_and_unchanged_since_its_status_was_taken(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"abcd")
    assert vouched(path, path.stat()) is None  # changed just now: within the racy window
    time.sleep(RACY_S)
    status = path.stat()
    assert vouched(path, status) == stat_key(status)
    assert vouched(tmp_path / "gone.bin", status) is None
    path.write_bytes(b"abce")  # written after the status was taken, as while it was being read
    assert vouched(path, status) is None
