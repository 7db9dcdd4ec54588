"""Issue 13, case 2: a release of any text (line separators, control and astral characters) verifies, and its
data/items.jsonl holds the text byte for byte, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from curation.workspace import Workspace
from exports.build import build_release
from exports.gates import Gates, media_files_gate
from exports.verify import read_items, verify_release
from tests.exports.workspace_factory import distinct_context, fill_workspace, group_rows
from tests.hostile_text import framed


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=framed(min_size=1), question=framed())
def test_a_release_of_any_text_verifies_and_keeps_it(
    make_workspace: Callable[[str], Workspace], tmp_path: Path, text: str, question: str
) -> None:
    n = len(list(tmp_path.glob("ws*")))
    ws = make_workspace(f"ws{n}")
    rows = group_rows("g1") + group_rows("g2")
    for row in rows[:2]:
        row["context"] = f"{distinct_context('g1')} {text}"
        row["question"] = question
    fill_workspace(ws, tmp_path / f"in{n}", rows)
    out = tmp_path / f"release{n}"
    result = build_release(ws, "1.0.0", out=out, gates=Gates(item=(("media_files", media_files_gate),)))
    report = verify_release(out, result.manifest_sha256)
    assert report.ok, report.mismatches
    released = read_items(out)
    assert released["g1-a"]["context"] == rows[0]["context"] and released["g1-b"]["question"] == question
    assert (out / "data" / "items.jsonl").read_bytes().count(b"\n") == 4
