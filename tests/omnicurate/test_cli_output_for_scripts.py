"""Output for scripts (docs/cli-conventions.md): to a pipe, standard output holds only the table; summaries,
staffing notes and progress go to standard error, whole lines, never wrapped or drawn as bars."""

from __future__ import annotations

import csv
import io
import json

from typer.testing import CliRunner

from curation.workspace import Workspace
from omnicurate.cli.main import app

runner = CliRunner()


def _invoke(ws: Workspace, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(ws.root), *args], catch_exceptions=False)


def _tsv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text), delimiter="\t"))


def test_status_to_a_pipe_prints_only_rows_and_the_counts_on_stderr(demo_workspace: Workspace) -> None:
    result = _invoke(demo_workspace, "status")
    assert result.exit_code == 0
    rows = _tsv(result.stdout)
    statuses = json.loads(_invoke(demo_workspace, "status", "--json").stdout)
    assert [r["item"] for r in rows] == [s["id"] for s in statuses]  # every line is an item: no footer
    assert all(None not in r and r["state"] in {s["state"] for s in statuses} for r in rows)
    admitted = sum(s["state"] == "admitted" for s in statuses)
    assert f"{admitted} admitted" in result.stderr and "admitted," not in result.stdout


def test_an_unknown_state_is_refused_with_the_states_there_are(demo_workspace: Workspace) -> None:
    result = _invoke(demo_workspace, "status", "--state", "bogus")
    assert result.exit_code == 2 and result.stdout == ""
    assert "unknown state 'bogus'" in result.stderr
    assert "in_review, returned, held, admitted, discarded" in result.stderr
    held = _invoke(demo_workspace, "status", "--state", "held")
    assert held.exit_code == 0 and {r["state"] for r in _tsv(held.stdout)} == {"held"}


def test_release_list_is_a_table_with_a_header_and_sizes(demo_workspace: Workspace) -> None:
    listed = json.loads(_invoke(demo_workspace, "release", "list", "--json").stdout)
    assert listed, "the demo publishes a release"
    rows = _tsv(_invoke(demo_workspace, "release", "list").stdout)
    assert [r["version"] for r in rows] == [r["version"] for r in listed]
    for row, release in zip(rows, listed, strict=True):
        files = [p for p in demo_workspace.root.joinpath("releases", release["version"]).rglob("*") if p.is_file()]
        assert release["bytes"] == sum(p.stat().st_size for p in files) > 0
        assert row["size"].endswith(("B", "kB", "MB", "GB")) and row["items"] == str(release["items"])


def test_stderr_lines_are_whole_when_not_a_terminal(demo_workspace: Workspace) -> None:
    long_name = "x" * 150
    result = _invoke(demo_workspace, "status", "--state", long_name)
    message = [line for line in result.stderr.splitlines() if long_name in line]
    assert len(message) == 1 and "the states are" in message[0]  # one line, not wrapped at 80 columns
    assert "━" not in result.stderr
