"""Issue 40 for `curate judge import queries`, on SQLite and PostgreSQL: a cell holding `true` is refused (strict
text), never stored as "True"; every problem names the user's own file and line (or Parquet row), never the
temporary JSONL the rows are turned into; a file named .parquet that is not one is a named error, not an
ArrowInvalid traceback; a refused import stores nothing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from curation.kinds.judge.queries import queries
from curation.workspace import Workspace
from devsupport.media_factory import make_image
from omnicurate.cli.main import app
from tests.hostile_records import assert_named_refusal, encode, junk_lines, mutated, write_lines

runner = CliRunner()
GOOD = {"id": "q-1", "instruction": "Describe the picture.", "output": "text", "source": "S", "license": "MIT"}
TEMPORARY = "curate-queries-"
"""The prefix of the folder the rows are written to before the import: no message may name it."""


def curate(ws: Workspace, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(ws.root), "judge", "import", "queries", *args])


def test_a_boolean_instruction_in_a_folder_is_refused_by_its_own_line(workspace: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    rows = folder / "rows.jsonl"
    folder.mkdir()
    lines = [GOOD, {**GOOD, "id": "q-2", "instruction": True}, {**GOOD, "id": "q-3", "output": "smell"}]
    lines += [{**GOOD, "id": "q-4", "source": 7}, {**GOOD, "id": "q-1"}]
    write_lines(rows, [encode(x) for x in lines])
    result = curate(workspace, str(folder))
    assert result.exit_code == 2, result.output
    assert TEMPORARY not in result.output
    assert_named_refusal(result.stderr, rows, len(lines))
    assert f"{rows}:2: instruction: must be text, not a boolean (true)" in result.stderr
    assert f"{rows}:3: output: Input should be 'text', 'image', 'audio' or 'video'" in result.stderr
    assert f"{rows}:4: source: must be text, not a number (7)" in result.stderr
    assert f"{rows}:5: id: duplicate id q-1 (first at {rows}:1)" in result.stderr
    assert queries(workspace) == []

    write_lines(rows, [encode(GOOD)])
    assert curate(workspace, str(folder)).exit_code == 0
    assert [(q.id, q.instruction) for q in queries(workspace)] == [("q-1", "Describe the picture.")]


def test_a_file_named_parquet_that_is_not_one_is_named(workspace: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    pq.write_table(pa.table({"id": ["p-1"], "instruction": ["Say hi."]}), folder / "good.parquet")
    (folder / "broken.parquet").write_text("id,instruction\np-2,Say bye.\n", encoding="utf-8")
    (folder / "broken.arrow").write_bytes(b"\x00" * 16)
    result = curate(workspace, str(folder), "--set", "source=S", "--set", "license=MIT", "--set", "output=text")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "ArrowInvalid" not in result.output
    assert f"{folder / 'broken.parquet'}: not a Parquet file (" in result.stderr
    assert f"{folder / 'broken.arrow'}: not an Arrow file (" in result.stderr
    alone = curate(workspace, str(folder / "broken.parquet"), "--set", "output=text")
    assert alone.exit_code == 2 and f"{folder / 'broken.parquet'}: not a Parquet file (" in alone.stderr
    assert queries(workspace) == []


def test_problems_found_while_importing_name_the_source_row(workspace: Workspace, tmp_path: Path) -> None:
    """A medium that is not what it claims, and a stored id with other content: found by the import of the
    written lines, named by the Parquet file and row they came from."""
    picture = make_image(tmp_path / "red.png", "red", fmt="PNG")
    table = pa.table(
        {
            "qid": ["m-1", "m-2"],
            "question": ["Describe it.", "What colour?"],
            "img": [
                {"bytes": picture.read_bytes(), "path": "red.png"},
                {"bytes": b"not a picture at all", "path": "fake.png"},
            ],
        }
    )
    source = tmp_path / "bench.parquet"
    args = ["--map", "id=qid", "--map", "instruction=question", "--map", "image=img"]
    args += ["--set", "source=S", "--set", "license=MIT", "--set", "output=text"]
    pq.write_table(table, source)
    result = curate(workspace, str(source), *args)
    assert result.exit_code == 2, result.output
    assert TEMPORARY not in result.output
    assert f"{source}: row 2: inputs.image: " in result.stderr
    assert queries(workspace) == []

    pq.write_table(table.slice(0, 1), source)
    assert curate(workspace, str(source), *args).exit_code == 0
    changed = table.slice(0, 1).set_column(1, "question", pa.array(["Describe it in one word."]))
    pq.write_table(changed, source)
    clash = curate(workspace, str(source), *args)
    assert clash.exit_code == 2 and TEMPORARY not in clash.output
    assert f"{source}: row 1: id: query 'm-1' is already stored with other content" in clash.stderr
    assert [q.instruction for q in queries(workspace)] == ["Describe it."]


def test_a_number_cell_in_parquet_is_refused_by_column_and_row(workspace: Workspace, tmp_path: Path) -> None:
    source = tmp_path / "bench.parquet"
    pq.write_table(pa.table({"qid": ["n-1", "n-2"], "question": ["Hi.", None], "flag": [True, False]}), source)
    args = ["--map", "id=qid", "--map", "instruction=flag", "--set", "source=S", "--set", "license=MIT"]
    result = curate(workspace, str(source), *args, "--set", "output=text")
    assert result.exit_code == 2, result.output
    assert f"{source}: row 1: flag: must be text, not a boolean (true) (the column given for instruction)" in (
        result.stderr
    )
    assert f"{source}: row 2: flag: must be text, not a boolean (false)" in result.stderr
    assert queries(workspace) == []


PATHS = [("id",), ("instruction",), ("output",), ("source",), ("license",), ("inputs",), ("inputs", "image")]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.one_of(mutated(GOOD, PATHS).map(encode), junk_lines, st.just(encode(GOOD))), min_size=1, max_size=3
    ),
    in_folder=st.booleans(),
)
def test_hostile_query_lines_are_refused_by_name_or_imported(
    workspace: Workspace, tmp_path: Path, lines: list[bytes], in_folder: bool
) -> None:
    """Property: a JSONL of generated hostile query lines, given as it is or inside a folder, is either imported
    (exit 0) or refused with every problem as FILE:LINE of that file (exit 2), nothing stored; never a traceback,
    never the temporary file's name."""
    folder = tmp_path / "bench"
    folder.mkdir(exist_ok=True)
    path = write_lines(folder / "queries.jsonl", lines)
    before = [(q.id, q.instruction) for q in queries(workspace)]
    result = curate(workspace, str(folder if in_folder else path))
    event(f"exit {result.exit_code}")
    assert result.exit_code in (0, 2), result.output
    assert TEMPORARY not in result.output
    if result.exit_code == 2:
        assert_named_refusal(result.stderr, path, len(lines))
        assert [(q.id, q.instruction) for q in queries(workspace)] == before
