"""Issue 13, case 9: the CLI's failures are one named line on stderr and exit 2 for bad input, never a traceback."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from curation.workspace import Workspace
from omnicurate.cli.main import app

runner = CliRunner()


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_non_utf8_notes_a_long_version_and_a_newline_version_exit_2(workspace: Workspace, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_bytes(b"caf\xe9\n")
    result = run("-w", str(workspace.root), "release", "build", "1.0.0", "--notes", str(notes))
    assert (
        result.exit_code == 2
        and f"{notes}:1: --notes: not UTF-8 text (invalid continuation byte at byte 4)" in result.stderr
    )
    for version in ("1." * 150 + "0", "1.0.0\n"):
        result = run("-w", str(workspace.root), "release", "build", version)
        assert result.exit_code == 2 and "version" in result.stderr and "Traceback" not in result.stderr


def test_init_on_a_file_and_a_bad_url_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    result = run("init", str(target))
    assert result.exit_code == 2 and "is a file, not a folder" in result.stderr
    result = run("init", str(tmp_path / "ws"), "--db", "nonsense")
    assert result.exit_code == 2 and "is not a database URL" in result.stderr
    assert not (tmp_path / "ws").exists()  # refused before anything was created


def test_export_to_an_unwritable_place_exits_2(workspace: Workspace, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    result = run("-w", str(workspace.root), "export", "items", str(blocker / "sub" / "items.jsonl"))
    assert result.exit_code == 2 and "cannot write the export" in result.stderr
