"""The demos the manual's examples and claims run against: built once per test process, by the commands
getting-started.md shows, into the folders it names (``demo-workspace``, ``story-demo``, ``judge-demo``)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.docs.curate_server import CurateServer
from tests.docs.manual_examples import environment

DEMO_COMMANDS = {
    "demo-workspace": "curate demo demo-workspace",
    "story-demo": "curate demo --kind story story-demo",
    "judge-demo": "curate demo --kind judge judge-demo",
}
MANUAL_GROUP = "manual"
"""The xdist_group of every test that uses the demos: with ``--dist loadgroup`` (as CI runs) one worker runs
them all, the other goes on with the rest of the suite."""


class Demos(dict[str, Path]):
    """The demo folders by name, and what building each printed (standard output and error together)."""

    logs: dict[str, str]


@pytest.fixture(scope="session")
def manual_demos(tmp_path_factory: pytest.TempPathFactory, curate_server: CurateServer | None) -> Demos:
    """The three demos, built side by side once per run (pytest-xdist workers share them: the first to ask
    builds them under a lock); tests copy them (examples) or only read them (claims)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    base = shared / "manual-demos"
    built = Demos({name: base / name for name in DEMO_COMMANDS})
    with open(shared / "manual-demos.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (base / "built").exists():
            shutil.rmtree(base, ignore_errors=True)
            _build(base, curate_server)
            (base / "built").touch()
    built.logs = {name: (base / f"{name}.log").read_text(encoding="utf-8") for name in DEMO_COMMANDS}
    return built


def _build(base: Path, server: CurateServer | None) -> None:
    (base / ".home").mkdir(parents=True)
    env = environment(base / ".home", server=server)
    running = {
        name: subprocess.Popen(
            ["bash", "-c", command], cwd=base, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for name, command in DEMO_COMMANDS.items()
    }
    for name, process in running.items():
        output, _ = process.communicate(timeout=300)
        assert process.returncode == 0, f"`{DEMO_COMMANDS[name]}` exited {process.returncode}:\n{output}"
        (base / f"{name}.log").write_text(output, encoding="utf-8")
