"""Which tests touch the optional tools and runtimes that ``.ci/bare-machine`` hides (a pytest plugin).

The bare-machine step proves that a test needing an optional tool says so (skips with the command that
installs it). Running the whole no-server selection a second time proves that for every test, but only the
tests that reach a hidden tool can behave differently there. CI's main run (everything installed) loads this
plugin with ``-p devsupport.tool_use`` and ``CURATE_TOOL_USE_RECORD=FILE``; it notes each test that, in its
own body or in the setup of a fixture it uses:

- runs or looks up a hidden tool (a subprocess whose program is one, or ``shutil.which`` of one);
- imports a hidden runtime, even one already loaded (``import`` statements, ``importlib.import_module``,
  ``importlib.util.find_spec``);
- starts another Python process, the ``curate`` command or a shell (which could do either where this one
  cannot see).

``.ci/bare-machine`` then runs just those tests with the tools hidden. A test that needs ffmpeg or torch
without saying so is among them by construction (it ran them in the main run), so it still fails there.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Generator, Iterable
from pathlib import Path
from typing import Any

import pytest

from devsupport.xdist_groups import collected_nodeid

HIDDEN_TOOLS = frozenset({"ffmpeg", "ffprobe", "fpcalc", "sox", "espeak", "espeak-ng", "chromium", "chromium-browser"})
"""Programs a bare machine lacks (Debian packages .ci/run installs)."""
HIDDEN_MODULES = frozenset(
    {"torch", "torchvision", "torchaudio", "torchcodec", "transformers", "lmformatenforcer", "vllm"}
)
"""Python packages a bare machine lacks (``pip install -e '.[dev]'`` does not bring them)."""
RECORD_ENV = "CURATE_TOOL_USE_RECORD"

_PYTHONS = {os.path.realpath(sys.executable), sys.executable}
_SHELLS = frozenset({"bash", "sh", "dash"})


def _program(args: Any) -> str:
    """The program a subprocess audit event names: the first argument, else the executable."""
    if isinstance(args, str | bytes | os.PathLike):
        first: Any = args
    elif isinstance(args, Iterable):
        first = next(iter(args), "")
    else:
        return ""
    return os.fsdecode(first)


class ToolUse:
    """Collects the uses; ``current`` is the set the running test (or fixture setup) adds to."""

    def __init__(self) -> None:
        self.current: set[str] | None = None
        self.fixtures: set[str] = set()
        self.tests: dict[str, set[str]] = {}

    def note(self, what: str) -> None:
        if self.current is not None:
            self.current.add(what)

    def note_program(self, program: str) -> None:
        name = os.path.basename(program)
        if name in HIDDEN_TOOLS:
            self.note(name)
        elif program in _PYTHONS or os.path.realpath(program) in _PYTHONS or name == "curate":
            self.note("python subprocess")
        elif name in _SHELLS:
            self.note("shell subprocess")  # a script can run any tool (the manual's examples run through bash)

    def note_module(self, name: str | None) -> None:
        if name and name.partition(".")[0] in HIDDEN_MODULES:
            self.note(name.partition(".")[0])

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "subprocess.Popen":
            executable, argv = args[0], args[1]
            self.note_program(os.fsdecode(executable) if executable else _program(argv))
        elif event in {"os.exec", "os.posix_spawn", "os.spawn"}:
            self.note_program(os.fsdecode(args[0]))

    def install(self) -> None:
        """Wrap the lookups once per process (an audit hook cannot be removed, so it checks ``current``)."""
        sys.addaudithook(self.audit)
        original_import = builtins.__import__
        original_import_module = importlib.import_module
        original_find_spec = importlib.util.find_spec
        original_which = shutil.which

        def wrapped_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0):  # noqa: A002, ANN202
            if level == 0:
                self.note_module(name)
            return original_import(name, globals, locals, fromlist, level)

        def wrapped(original: Callable[..., Any], check: Callable[[Any], None]) -> Callable[..., Any]:
            def call(name: Any, *args: Any, **kwargs: Any) -> Any:
                check(name)
                return original(name, *args, **kwargs)

            return call

        builtins.__import__ = wrapped_import
        importlib.import_module = wrapped(original_import_module, self.note_module)  # type: ignore[assignment]
        importlib.util.find_spec = wrapped(original_find_spec, self.note_module)  # type: ignore[assignment]
        shutil.which = wrapped(original_which, lambda cmd: self.note_program(os.fsdecode(cmd)))  # type: ignore[assignment]


class ToolUsePlugin:
    def __init__(self, record: Path) -> None:
        self.record = record
        self.use = ToolUse()
        self.use.install()

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, Any, Any]:
        outer = self.use.current
        self.use.current = set()
        try:
            return (yield)
        finally:
            if self.use.current:
                self.use.fixtures.add(fixturedef.argname)
            if outer is not None:
                outer |= self.use.current
            self.use.current = outer

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        self.use.current = set()
        try:
            return (yield)
        finally:
            used = self.use.current
            self.use.current = None
            used |= {f"fixture {name}" for name in getattr(item, "fixturenames", ()) if name in self.use.fixtures}
            if used:
                self.use.tests[collected_nodeid(item)] = used

    def pytest_sessionfinish(self) -> None:
        """Each process (pytest-xdist worker) appends its own file: FILE.<pid>, one node id per line."""
        if not self.use.tests:
            return
        out = self.record.with_name(f"{self.record.name}.{os.getpid()}")
        with out.open("a", encoding="utf-8") as fh:
            for nodeid, used in sorted(self.use.tests.items()):
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
