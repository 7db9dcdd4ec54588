"""`curate import items` shows a long import's progress on stderr, and nothing for a small one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation import workers
from omnicurate.cli import items as cli_items
from omnicurate.cli.main import app
from tests.media_factory import item_row, write_items

runner = CliRunner()


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_a_long_import_shows_its_progress_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_items.MediaProgress, "SHOWN_FROM", 10)
    monkeypatch.setattr(workers, "MIN_PARALLEL", 4)
    monkeypatch.setattr(workers, "CHUNK", 3)
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    ws = str(tmp_path / "ws")
    assert invoke("init", ws).exit_code == 0
    assert invoke("-w", ws, "people", "add", "ann1", "--role", "author").exit_code == 0
    rows = [item_row(f"i{i:02d}", group=f"g{i // 3}", image=f"media/g{i // 3}.jpg") for i in range(30)]
    result = invoke("-w", ws, "import", "items", str(write_items(tmp_path / "in", rows)))
    assert result.exit_code == 0
    shown = [line for line in result.stderr.splitlines() if line.startswith("media: ")]
    assert shown[-1] == "media: 40/40 files read (hashed, copied, decoded)"
    assert 1 < len(shown) <= 10
    assert "30 created" in result.stdout + result.stderr
    small = write_items(tmp_path / "small", [item_row("s1"), item_row("s2")])
    result = invoke("-w", ws, "import", "items", str(small))
    assert result.exit_code == 0 and "2 created" in result.stdout + result.stderr
    assert "media: " not in result.stderr
