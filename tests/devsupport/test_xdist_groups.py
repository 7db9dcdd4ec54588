"""With ``--dist loadgroup`` every test of an ``xdist_group`` runs on one pytest-xdist worker (CI relies on it to
start one vLLM server, not one a worker), and the tool-use record names tests by the ids ``pytest NODEID``
selects."""

from __future__ import annotations

import os
import re
from pathlib import Path

from devsupport.tool_use import recorded
from tests.devsupport.inner_pytest import inner_pytest

REPO = Path(__file__).resolve().parents[2]

INNER_CONFTEST = """
import pytest
from devsupport.xdist_groups import name_groups_in_nodeids


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session):
    if getattr(session.config.option, "loadgroup", False):
        name_groups_in_nodeids(session.items)
"""

INNER_TESTS = """
import shutil
import time

import pytest


@pytest.mark.xdist_group("server")
@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    shutil.which("ffmpeg")
    time.sleep(0.05)


@pytest.mark.parametrize("n", range(6))
def test_free(n):
    time.sleep(0.05)
"""


def test_a_group_runs_on_one_worker_and_is_recorded_by_its_plain_id(tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "conftest.py").write_text(INNER_CONFTEST)
    (inner / "test_inner.py").write_text(INNER_TESTS)
    record = tmp_path / "tool-use"
    env = {**os.environ, "PYTHONPATH": str(REPO), "CURATE_TOOL_USE_RECORD": str(record)}
    env.pop("CI", None)
    run = inner_pytest(inner, env, "-v", "-n", "2", "--dist", "loadgroup")
    workers = {
        test: worker for worker, test in re.findall(r"\[(gw\d)\] \[ *\d+%\] PASSED (test_inner\.py::\S+)", run.stdout)
    }
    grouped = {test for test in workers if "test_grouped" in test}
    assert len(grouped) == 6 and all(test.endswith("@server") for test in grouped), run.stdout
    assert len({workers[test] for test in grouped}) == 1, run.stdout
    assert sorted(recorded(record)) == [f"test_inner.py::test_grouped[{n}]" for n in range(6)]
