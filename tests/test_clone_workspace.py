"""``clone_workspace`` (tests/conftest.py) copies a template that other test processes are reading: the manual's
claims read the demos in place while examples copy them, on whichever pytest-xdist worker runs each."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from curation.workspace import Workspace
from tests.conftest import clone_workspace

READER = """
import sqlite3, sys, time
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:  # each connection makes the -wal and -shm files; the last one to close removes them
    db = sqlite3.connect(sys.argv[1])
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    db.close()
"""


def tables(database: Path) -> list[str]:
    with closing(sqlite3.connect(database)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]


def test_a_template_is_copied_whole_while_another_process_opens_and_closes_it(tmp_path: Path) -> None:
    template = tmp_path / "template"
    Workspace.init(template).close()
    expected = tables(template / "curate.db")
    assert "item" in expected
    reader = subprocess.Popen([sys.executable, "-c", READER, str(template / "curate.db"), "2"])
    try:
        copies = 0
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline or copies < 5:
            clone_workspace(template, tmp_path / f"copy-{copies}").close()
            assert tables(tmp_path / f"copy-{copies}" / "curate.db") == expected
            copies += 1
    finally:
        reader.wait(timeout=30)
    assert reader.returncode == 0
