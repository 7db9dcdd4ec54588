"""The derivation split across two processes by group (``curation.split_derivation``) gives what one process
gives: every status, in order, with the same reasons, and the same staffing gaps, on SQLite and PostgreSQL.
A child that fails is made good by the parent; an error raises as it would in one process; a process with
another thread running never forks. ``curate status`` and ``curate funnel`` split at 10,000 items; here they
split from the first item. The CLI's documents, split, are checked against the pre-issue-27 snapshot in
``test_workflow_snapshot.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from curation import split_derivation
from curation.errors import CurateError
from curation.split_derivation import StatusRows, derive_statuses, halves
from curation.workflow import StatusInputs
from curation.workspace import Workspace
from tests.curation.test_pool_of_five import pool_workspace

ROOT = Path(__file__).resolve().parents[2]


def _inputs(ws: Workspace) -> StatusInputs:
    with ws.session() as session:
        return StatusInputs.load(session)


def _rows(ws: Workspace) -> StatusRows:
    with ws.session() as session:
        return StatusRows.load(session)


def _documents(found: tuple[list[Any], dict[str, Any]]) -> tuple[list[dict[str, Any]], list[tuple[str, Any]]]:
    statuses, gaps = found
    return [st.as_json() for st in statuses], list(gaps.items())


def _reaped(child: int) -> bool:
    try:
        os.waitpid(child, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_the_rows_build_the_inputs_a_load_reads(demo_workspace: Workspace) -> None:
    rows = _rows(demo_workspace)
    assert rows.facts() == _inputs(demo_workspace)
    assert not rows.rest.items and not rows.rest.records, "the items and records are kept as rows"


def test_the_demo_split_in_two_derives_as_one_process_does(demo_workspace: Workspace, forks: list[int]) -> None:
    inputs = _inputs(demo_workspace)
    rows = _rows(demo_workspace)
    parts = halves(rows)
    assert parts is not None
    first, second = (part.facts() for part in parts)
    assert first.items and second.items
    assert not {i.group for i in first.items} & {i.group for i in second.items}, "a group is never split"
    assert sorted(i.id for i in first.items + second.items) == [i.id for i in inputs.items]
    for part in (first, second):  # each half reads its own items' records, group records and decisions
        ids, groups = {i.id for i in part.items}, {i.group for i in part.items}
        assert {r.subject for r in part.records} <= {f"item:{i}" for i in ids} | {f"group:{g}" for g in groups}
        assert {d.item_id for d in part.decisions} <= ids and set(part.perturbed) <= groups
    assert len(first.records) + len(second.records) == len(inputs.records)
    whole = _documents(inputs.derive_with_staffing(demo_workspace))
    assert _documents(derive_statuses(demo_workspace, rows)) == whole
    assert len(forks) == 1 and _reaped(forks[0])
    assert len({st["state"] for st in whole[0]}) > 2, "the demo has items in several states"


def test_staffing_gaps_of_a_pool_too_small_are_the_same_split(
    workspace: Workspace, tmp_path: Path, forks: list[int]
) -> None:
    pool_workspace(workspace, tmp_path, ("p1", "p2", "p3"))
    whole = _documents(_inputs(workspace).derive_with_staffing(workspace))
    assert {item for item, _ in whole[1]} == {"a", "b", "c", "d"}, "three people cannot staff TRIAD's stages"
    assert _documents(derive_statuses(workspace)) == whole
    assert len(forks) == 1


def test_a_child_that_fails_is_made_good_by_the_parent(
    demo_workspace: Workspace, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _documents(_inputs(demo_workspace).derive_with_staffing(demo_workspace))
    monkeypatch.setattr(split_derivation, "_derive_in_child", lambda *_: os._exit(1))
    assert _documents(derive_statuses(demo_workspace, _rows(demo_workspace))) == whole
    assert len(forks) == 1 and _reaped(forks[0])


def test_an_error_in_the_derivation_raises_as_in_one_process(
    demo_workspace: Workspace, forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _rows(demo_workspace)

    def broken(*_: Any) -> Any:
        raise CurateError("a kind refused its records")

    monkeypatch.setattr(StatusInputs, "derive_with_staffing", broken)
    with pytest.raises(CurateError, match="refused its records"):
        derive_statuses(demo_workspace, rows)
    assert len(forks) == 1 and _reaped(forks[0])


@pytest.mark.parametrize("split", [True, False])
def test_the_callers_work_is_done_once_beside_the_derivation(
    demo_workspace: Workspace, forks: list[int], monkeypatch: pytest.MonkeyPatch, split: bool
) -> None:
    if not split:
        monkeypatch.setattr(split_derivation, "SPLIT_FROM", 10**9)
    whole = _documents(_inputs(demo_workspace).derive_with_staffing(demo_workspace))
    done: list[int] = []
    found = derive_statuses(demo_workspace, _rows(demo_workspace), meanwhile=lambda: done.append(len(forks)))
    assert _documents(found) == whole and done == [1 if split else 0], "once, after the child was forked"

    def broken() -> None:
        raise CurateError("the caller's work failed")

    with pytest.raises(CurateError, match="the caller's work failed"):
        derive_statuses(demo_workspace, _rows(demo_workspace), meanwhile=broken)
    assert all(_reaped(child) for child in forks), "the child is waited for all the same"


def test_a_process_with_another_thread_derives_in_one(demo_workspace: Workspace, forks: list[int]) -> None:
    whole = _documents(_inputs(demo_workspace).derive_with_staffing(demo_workspace))
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    try:
        assert _documents(derive_statuses(demo_workspace, _rows(demo_workspace))) == whole
    finally:
        done.set()
        thread.join()
    assert forks == [], "a thread could hold a lock the child would wait on forever"


def test_small_workspaces_and_single_groups_are_not_split(
    demo_workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _rows(demo_workspace)
    assert len(rows.items) < split_derivation.SPLIT_FROM
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked for a small workspace"))
    derive_statuses(demo_workspace, rows)
    one_group = rows.of_groups({rows.items[0][1]})
    assert one_group.items and halves(one_group) is None


FRESH_PROCESS = """
import json, os, sys
from pathlib import Path
from curation import split_derivation
from curation.workspace import Workspace

split_derivation.SPLIT_FROM = 0
forked = []
fork = os.fork

def counted():
    child = fork()
    if child:
        forked.append(child)
    return child

os.fork = counted
ws = Workspace.open(Path(sys.argv[1]))
with ws.session() as session:
    inputs = split_derivation.StatusInputs.load(session)
    rows = split_derivation.StatusRows.load(session)
split = split_derivation.derive_statuses(ws, rows)
whole = inputs.derive_with_staffing(ws)
same = [st.as_json() for st in split[0]] == [st.as_json() for st in whole[0]] and split[1] == whole[1]
print(json.dumps({"forked": len(forked), "same": same}))
"""


def test_a_fresh_process_splits_by_the_real_rule(demo_workspace: Workspace) -> None:
    """In a new process with one thread (what `curate status` is), the unpatched rule forks, and the halves
    give what one process gives."""
    demo_workspace.close()
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, str(demo_workspace.root)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"forked": 1, "same": True}
