"""The built-in kinds load on first use: `curate status` in a workspace of one kind imports no other kind, and
a kind whose units live in a table of its own is loaded as soon as that table holds one."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from curation.kinds import kind_of, kinds
from curation.kinds._registry import BUILTIN_KINDS, UNITS_APART
from curation.workspace import Workspace
from tests.exports.workspace_factory import fill_workspace, group_rows

STATUS_AND_MODULES = """
import json, sys
from typer.testing import CliRunner
from omnicurate.cli.main import app
result = CliRunner().invoke(app, ["-w", sys.argv[1], "status", "--json"])
assert result.exit_code == 0, result.output
kinds = sorted(m.split(".")[2] for m in sys.modules if m.count(".") >= 2 and m.startswith("curation.kinds."))
print(json.dumps({"rows": json.loads(result.stdout), "kinds": sorted(set(kinds) - {"_parts", "_registry"})}))
"""


def _status_in_a_new_process(root: Path) -> dict:  # type: ignore[type-arg]
    run = subprocess.run(
        [sys.executable, "-c", STATUS_AND_MODULES, str(root)], capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout)


def test_status_of_an_mcq_workspace_loads_only_the_mcq_kind(
    make_workspace: Callable[[str], Workspace], tmp_path: Path
) -> None:
    ws = make_workspace("mcq")
    fill_workspace(ws, tmp_path, group_rows("g1"))
    found = _status_in_a_new_process(ws.root)
    assert found["kinds"] == ["mcq"]
    assert {row["kind"] for row in found["rows"]} == {"mcq"} and len(found["rows"]) == 2


def test_a_judge_task_in_the_workspace_loads_the_judge_kind_for_status(
    make_workspace: Callable[[str], Workspace], tmp_path: Path
) -> None:
    from curation.kinds.judge.tables import JudgeTask

    ws = make_workspace("judge")
    fill_workspace(ws, tmp_path, group_rows("g1"))
    with ws.writing() as s:
        s.add(
            JudgeTask(
                id="t1",
                instruction="Describe the picture.",
                inputs={},
                output="text",
                modality_pair="text2text",
                source="test",
                license="CC0-1.0",
                content_hash="h",
                created_by="ann1",
            )
        )
    found = _status_in_a_new_process(ws.root)
    assert "judge" in found["kinds"] and "story" not in found["kinds"]
    assert [row["id"] for row in found["rows"] if row["kind"] == "judge_task"] == ["t1"]


def test_the_registry_knows_each_built_in_kind_and_the_table_of_units_that_live_apart() -> None:
    from curation.kinds.judge.tables import JudgeTask

    assert {k.name for k in kinds()} >= set(BUILTIN_KINDS)
    assert {k.name for k in kinds() if k.name in BUILTIN_KINDS and k.statuses is not None} == set(UNITS_APART)
    assert UNITS_APART["judge_task"] == JudgeTask.__tablename__
    assert all(kind_of(name).name == name for name in BUILTIN_KINDS)
