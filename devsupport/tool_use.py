"""Which tests touch the optional tools and runtimes that ``.ci/bare-machine`` hides (a pytest plugin).

The bare-machine step proves that a test needing an optional tool says so (skips with the command that
installs it). Running the whole no-server selection a second time proves that for every test, but only the
tests that reach a hidden tool can behave differently there. CI's main run (everything installed) loads this
plugin with ``-p devsupport.tool_use`` and ``CURATE_TOOL_USE_RECORD=FILE``; it notes each test that, in its
own body or in the setup of a fixture it uses:

- runs or looks up a hidden tool (a subprocess whose program is one, or ``shutil.which`` of one);
- imports a hidden runtime, even one already loaded (``import`` statements, ``importlib.import_module``,
  ``importlib.util.find_spec``);
- starts a shell (which could do either where this one cannot see), or a Python process that did not report
  back or had not ended when the test did (a server a fixture started).

The Python processes a test starts report what they reach themselves (``devsupport/tool_hooks.py``), and so do
processes forked from them or from the test: a test whose children reached nothing hidden is not noted for
having started them.

``.ci/bare-machine`` then runs just those tests with the tools hidden. A test that needs ffmpeg or torch
without saying so is among them by construction (it ran them in the main run), so it still fails there.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import sysconfig
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from devsupport import tool_hooks
from devsupport.tool_hooks import HIDDEN_MODULES, HIDDEN_TOOLS, Scope, ToolUse
from devsupport.xdist_groups import collected_nodeid

__all__ = ["HIDDEN_MODULES", "HIDDEN_TOOLS", "RECORD_ENV", "recorded"]

RECORD_ENV = "CURATE_TOOL_USE_RECORD"


def install_child_hooks() -> None:
    """Write the ``.pth`` line that loads the hooks in every Python process this venv starts while a test runs
    (it does nothing without ``CURATE_TOOL_USE_CHILD``); written atomically, as each worker does it."""
    path = Path(sysconfig.get_paths()["purelib"]) / tool_hooks.PTH_NAME
    if path.is_file() and path.read_text(encoding="utf-8") == tool_hooks.PTH_LINE:
        return
    staged = path.with_name(f".{path.name}.{os.getpid()}")
    staged.write_text(tool_hooks.PTH_LINE, encoding="utf-8")
    staged.replace(path)


class ToolUsePlugin:
    def __init__(self, record: Path) -> None:
        self.record = record
        self.children = record.with_name(f"{record.name}-children")
        self.children.mkdir(parents=True, exist_ok=True)
        self.scopes = itertools.count()
        self.use = ToolUse()
        self.use.install()
        self.fixtures: set[str] = set()
        self.stack: list[tuple[Scope | None, str | None]] = []
        self.tests: dict[str, set[str]] = {}
        install_child_hooks()
        os.environ[tool_hooks.HOOKS_ENV] = tool_hooks.__file__

    def enter(self) -> Scope:
        """A scope of its own while a test or a fixture's setup runs; its report folder is inherited by the
        processes started meanwhile."""
        self.stack.append((self.use.scope, os.environ.get(tool_hooks.CHILD_ENV)))
        folder = self.children / f"{os.getpid()}-{next(self.scopes)}"
        folder.mkdir()
        scope = Scope(str(folder))
        self.use.scope = scope
        os.environ[tool_hooks.CHILD_ENV] = scope.folder
        return scope

    def leave(self, scope: Scope) -> set[str]:
        """What the scope reached, its children's reports taken in; it joins the enclosing scope's uses."""
        outer, outer_folder = self.stack.pop()
        self.use.scope = outer
        if outer_folder is None:
            os.environ.pop(tool_hooks.CHILD_ENV, None)
        else:
            os.environ[tool_hooks.CHILD_ENV] = outer_folder
        used = scope.resolved()
        with contextlib.suppress(OSError):
            os.rmdir(scope.folder)  # kept where a child reported, for whoever wonders why a test was noted
        if outer is not None:
            outer.uses |= used
        return used

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, Any, Any]:
        scope = self.enter()
        try:
            return (yield)
        finally:
            if self.leave(scope):
                self.fixtures.add(fixturedef.argname)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        scope = self.enter()
        try:
            return (yield)
        finally:
            used = self.leave(scope)
            used |= {f"fixture {name}" for name in getattr(item, "fixturenames", ()) if name in self.fixtures}
            if used:
                self.tests[collected_nodeid(item)] = used

    def pytest_sessionfinish(self) -> None:
        """Each process (pytest-xdist worker) appends its own file: FILE.<pid>, one node id per line."""
        if not self.tests:
            return
        out = self.record.with_name(f"{self.record.name}.{os.getpid()}")
        with out.open("a", encoding="utf-8") as fh:
            for nodeid, used in sorted(self.tests.items()):
                fh.write(f"{nodeid}\t{','.join(sorted(used))}\n")


def recorded(record: Path) -> dict[str, str]:
    """Node id -> what it used, merged over the processes of one run."""
    found: dict[str, str] = {}
    for part in sorted(record.parent.glob(f"{record.name}.*")):
        for line in part.read_text(encoding="utf-8").splitlines():
            nodeid, _, used = line.partition("\t")
            found[nodeid] = used
    return found


def pytest_configure(config: pytest.Config) -> None:
    path = os.environ.get(RECORD_ENV)
    if path:
        config.pluginmanager.register(ToolUsePlugin(Path(path)), "omnicurate-tool-use")


def main(argv: list[str]) -> int:
    """``python -m devsupport.tool_use FILE``: the recorded node ids, one per line (for ``pytest @LIST``)."""
    found = recorded(Path(argv[0]))
    sys.stdout.write("".join(f"{nodeid}\n" for nodeid in sorted(found)))
    return 0 if found else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
