"""devsupport.tool_use notes exactly the tests that reach a hidden tool or runtime: run, looked up, imported (even
when already loaded), in the test or in a fixture it uses (also a session fixture another test set up first), or
through another Python process; the bare-machine step runs only those."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from devsupport.tool_use import HIDDEN_MODULES, HIDDEN_TOOLS, recorded
from tests.devsupport.inner_pytest import inner_pytest

REPO = Path(__file__).resolve().parents[2]

INNER_TESTS = """
import importlib
import importlib.util
import multiprocessing
import os
import shutil
import subprocess
import sys

import pytest


@pytest.fixture(scope="session")
def model():
    import torch  # the fake one on this run's path
    return torch.NAME


def test_plain():
    assert sum([1, 2]) == 3


def test_runs_ffmpeg():
    assert subprocess.run(["ffmpeg", "-version"], capture_output=True).returncode == 0


def test_looks_up_fpcalc():
    assert shutil.which("fpcalc") is None or True


def test_imports_transformers_lazily():
    transformers = importlib.import_module("transformers")
    assert transformers.NAME == "fake"


def test_finds_vllm():
    assert importlib.util.find_spec("vllm") is None


def test_uses_the_model_first(model):
    assert model == "fake"


def test_uses_the_model_later(model):
    assert model == "fake"


def test_imports_torch_again_when_loaded():
    assert "torch" in sys.modules
    import torch
    assert torch.NAME == "fake"


def test_starts_python():
    assert subprocess.run([sys.executable, "-c", "pass"]).returncode == 0


def test_starts_python_that_runs_ffmpeg():
    code = "import subprocess; subprocess.run(['ffmpeg', '-version'], check=True)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_starts_python_that_starts_python_that_imports_torch():
    inner = "import torch"
    code = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {inner!r}], check=True)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_starts_python_without_the_environment():
    assert subprocess.run([sys.executable, "-c", "pass"], env={"PATH": os.environ["PATH"]}).returncode == 0


def test_starts_python_that_outlives_it():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])


def test_forks_a_child_that_looks_up_sox():
    pid = os.fork()
    if pid == 0:
        shutil.which("sox")
        os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0


def spawned(function, *args):
    # FUNCTION(*ARGS) in a spawned pool's worker, which then ends as a worker does (not terminated)
    pool = multiprocessing.get_context("spawn").Pool(1)
    try:
        return pool.apply(function, args)
    finally:
        pool.close()
        pool.join()


def test_spawns_a_worker_that_imports_transformers():
    assert spawned(eval, "__import__('transformers').NAME") == "fake"


def test_spawns_a_worker_that_reaches_nothing():
    assert spawned(sum, [1, 2]) == 3


def test_runs_a_shell_script():
    assert subprocess.run(["bash", "-c", "true"]).returncode == 0


@pytest.mark.parametrize("n", [1, 2])
def test_parametrized_plain(n):
    assert n in (1, 2)
"""


def test_the_record_names_the_tests_that_reach_a_hidden_tool(tmp_path: Path) -> None:
    assert {"ffmpeg", "fpcalc", "chromium"} <= HIDDEN_TOOLS and {"torch", "vllm"} <= HIDDEN_MODULES
    tools = tmp_path / "bin"
    tools.mkdir()
    fake = tools / "ffmpeg"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    modules = tmp_path / "site"
    for name in ("torch", "transformers"):
        (modules / name).mkdir(parents=True)
        (modules / name / "__init__.py").write_text('NAME = "fake"\n')
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "test_inner.py").write_text(INNER_TESTS)
    record = tmp_path / "record" / "tool-use"
    record.parent.mkdir()
    env = {
        **os.environ,
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join([str(modules), str(REPO)]),
        "CURATE_TOOL_USE_RECORD": str(record),
    }
    inner_pytest(inner, env, "-q", "-p", "no:xdist")
    found = {nodeid.removeprefix("test_inner.py::"): used for nodeid, used in recorded(record).items()}
    assert found == {
        "test_runs_ffmpeg": "ffmpeg",
        "test_looks_up_fpcalc": "fpcalc",
        "test_imports_transformers_lazily": "transformers",
        "test_finds_vllm": "vllm",
        "test_uses_the_model_first": "fixture model,torch",
        "test_uses_the_model_later": "fixture model",
        "test_imports_torch_again_when_loaded": "torch",
        "test_starts_python_that_runs_ffmpeg": "ffmpeg",
        "test_starts_python_that_starts_python_that_imports_torch": "torch",
        "test_starts_python_without_the_environment": "python subprocess",
        "test_starts_python_that_outlives_it": "python subprocess",
        "test_forks_a_child_that_looks_up_sox": "sox",
        # the first spawn also starts multiprocessing's resource tracker, which outlives the test
        "test_spawns_a_worker_that_imports_transformers": "python subprocess,transformers",
        "test_runs_a_shell_script": "shell subprocess",
    }
    listed = subprocess.run(
        [sys.executable, "-m", "devsupport.tool_use", str(record)], cwd=REPO, capture_output=True, text=True
    )
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == len(found)
    assert "test_inner.py::test_plain\n" not in listed.stdout
    # their children reached nothing hidden, reported so, and ended
    assert "test_inner.py::test_starts_python\n" not in listed.stdout
    assert "test_inner.py::test_spawns_a_worker_that_reaches_nothing\n" not in listed.stdout


def test_no_record_lists_nothing_and_says_so_by_its_exit(tmp_path: Path) -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "devsupport.tool_use", str(tmp_path / "tool-use")],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 1 and listed.stdout == ""
