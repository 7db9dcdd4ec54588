"""The hooks that notice a hidden tool or runtime being reached: in a test process, and in every Python process
its tests start (``devsupport/tool_use.py`` is the pytest side).

A child is a process of its own, so the test's hooks cannot see what it does. While a test (or a fixture's setup)
runs, ``CURATE_TOOL_USE_CHILD`` names a report folder; the project venv's ``omnicurate_tool_use.pth`` (written by
the plugin, inert without that variable) loads this file by path in every Python process the venv starts, and
the process writes ``FOLDER/PID``: ``start exec``, what it reached, ``end`` at exit. A process forked from a hooked
one writes ``start fork`` and ``end`` the same way. The test then takes its children's uses in place of "python
subprocess" only when every Python process it started reported, and every reporting process ended; otherwise it
stays "python subprocess" (run on the bare machine, as before). No pytest and no project import here: this file
runs at the start-up of every child.
"""

from __future__ import annotations

import atexit
import builtins
import functools
import importlib
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from typing import Any

HIDDEN_TOOLS = frozenset({"ffmpeg", "ffprobe", "fpcalc", "sox", "espeak", "espeak-ng", "chromium", "chromium-browser"})
"""Programs a bare machine lacks (Debian packages .ci/run installs)."""
HIDDEN_MODULES = frozenset(
    {"torch", "torchvision", "torchaudio", "torchcodec", "transformers", "lmformatenforcer", "vllm"}
)
"""Python packages a bare machine lacks (``pip install -e '.[dev]'`` does not bring them)."""
CHILD_ENV = "CURATE_TOOL_USE_CHILD"
"""The running test's report folder, inherited by the processes it starts."""
HOOKS_ENV = "CURATE_TOOL_USE_HOOKS"
"""This file's path, for the ``.pth`` line that loads it in a child."""
PYTHON_START = "python subprocess"
SHELL_START = "shell subprocess"
_STARTED_EXEC, _STARTED_FORK, _ENDED = "start exec", "start fork", "end"

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


class Scope:
    """What one test (or one fixture's setup) reached in this process, and the Python processes it started."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.uses: set[str] = set()
        self.python_starts = 0

    def resolved(self) -> set[str]:
        """The uses, with "python subprocess" replaced by what the children reported when all of them did."""
        expected, exec_started, complete, reported = self.python_starts, 0, True, set()
        try:
            names = os.listdir(self.folder)
        except OSError:  # the folder is gone: nothing can be said of the children
            names, complete = [], False
        for name in names:
            with open(os.path.join(self.folder, name), encoding="utf-8") as fh:
                lines = fh.read().splitlines()
            starts = sum(line.startswith("start ") for line in lines)
            exec_started += lines.count(_STARTED_EXEC)
            complete = complete and lines.count(_ENDED) >= starts
            expected += lines.count(PYTHON_START)
            reported |= {line for line in lines if not line.startswith("start ") and line != _ENDED}
        if complete and exec_started >= expected:
            return (self.uses | reported) - {PYTHON_START}
        return self.uses | reported | {PYTHON_START}  # a child that did not report, or has not ended


class ChildReport:
    """This process's report file: each use once (each Python start counted), ``end`` at exit."""

    def __init__(self, folder: str, how: str) -> None:
        self.folder = folder
        self.path = os.path.join(folder, str(os.getpid()))
        self.written: set[str] = set()
        self.write(how)

    def write(self, line: str) -> None:
        if line in self.written and line != PYTHON_START:
            return
        self.written.add(line)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, f"{line}\n".encode())
        finally:
            os.close(fd)


class ToolUse:
    """Notes the uses: into ``scope`` in the test process, into a report file in a child (``report``)."""

    def __init__(self) -> None:
        self.scope: Scope | None = None
        self.report: ChildReport | None = None

    def note(self, what: str) -> None:
        if self.report is not None:
            self.report.write(what)
        elif self.scope is not None:
            self.scope.uses.add(what)
            if what == PYTHON_START:
                self.scope.python_starts += 1

    def note_program(self, program: str) -> None:
        name = os.path.basename(program)
        if name in HIDDEN_TOOLS:
            self.note(name)
        elif program in _PYTHONS or os.path.realpath(program) in _PYTHONS or name == "curate":
            self.note(PYTHON_START)
        elif name in _SHELLS:
            self.note(SHELL_START)  # a script can run any tool (the manual's examples run through bash)

    def note_module(self, name: str | None) -> None:
        if name and name.partition(".")[0] in HIDDEN_MODULES:
            self.note(name.partition(".")[0])

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "subprocess.Popen":
            executable, argv = args[0], args[1]
            self.note_program(os.fsdecode(executable) if executable else _program(argv))
        elif event in {"os.exec", "os.posix_spawn", "os.spawn"}:
            self.note_program(os.fsdecode(args[0]))

    def report_to(self, folder: str, how: str) -> None:
        """From now on this process is a child: its uses go to FOLDER/PID, and its end is written at exit."""
        self.scope = None
        self.report = report = ChildReport(folder, how)
        atexit.register(report.write, _ENDED)
        exit_now = os._exit

        def _exit(status: int) -> None:  # forked workers (multiprocessing) leave by os._exit, past atexit
            report.write(_ENDED)
            exit_now(status)

        os._exit = _exit  # type: ignore[assignment]

    def _after_fork(self) -> None:
        folder = self.report.folder if self.report else self.scope and self.scope.folder
        if folder:
            self.report_to(folder, _STARTED_FORK)

    def install(self) -> None:
        """Wrap the lookups once per process (an audit hook cannot be removed, so ``note`` checks where to go)."""
        sys.addaudithook(self.audit)
        os.register_at_fork(after_in_child=self._after_fork)
        original_import = builtins.__import__
        original_import_module = importlib.import_module
        original_find_spec = importlib.util.find_spec
        original_which = shutil.which

        def wrapped_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0):  # noqa: A002, ANN202
            if level == 0:
                self.note_module(name)
            return original_import(name, globals, locals, fromlist, level)

        def wrapped(original: Callable[..., Any], check: Callable[[Any], None]) -> Callable[..., Any]:
            @functools.wraps(original)  # the same name, so that pickle finds it (a spawned pool's task)
            def call(name: Any, *args: Any, **kwargs: Any) -> Any:
                check(name)
                return original(name, *args, **kwargs)

            return call

        builtins.__import__ = wrapped_import
        importlib.import_module = wrapped(original_import_module, self.note_module)  # type: ignore[assignment]
        importlib.util.find_spec = wrapped(original_find_spec, self.note_module)  # type: ignore[assignment]
        shutil.which = wrapped(original_which, lambda cmd: self.note_program(os.fsdecode(cmd)))  # type: ignore[assignment]


PTH_NAME = "omnicurate_tool_use.pth"
PTH_LINE = (
    f"import os; exec(open(os.environ[{HOOKS_ENV!r}]).read(), {{'__name__': 'omnicurate_tool_use_child'}}) "
    f"if os.environ.get({CHILD_ENV!r}) and os.environ.get({HOOKS_ENV!r}) else None\n"
)
"""Loads this file in a Python process started while a recorded test ran; does nothing anywhere else."""


if __name__ == "omnicurate_tool_use_child":
    _child = ToolUse()
    _child.install()
    _child.report_to(os.environ[CHILD_ENV], _STARTED_EXEC)
