"""One function over many inputs, in a pool of worker processes sized to the CPUs, or in this process when the
inputs are few (a pool costs more to start than a small import takes).

Inputs are handed out as the caller finds them, so the workers start while the caller still reads its input;
results come back in input order, so a caller reports problems in the order of its input whichever way ran.
The workers ignore Ctrl-C: the caller alone stops, waits for its workers (none writes after it returns) and
then undoes what they made.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")

MIN_PARALLEL = 200
"""Fewer inputs than this run in this process (starting the pool would cost more than it saves)..."""
MIN_PARALLEL_WEIGHT = 64 * 2**20
"""...unless their weights (see ``Runner``) reach this: a few large media files take long to measure."""
CHUNK = 32
"""Inputs per message to a worker: large enough that the messages cost little, small enough to share out."""

log = logging.getLogger(__name__)

_context: Any = None
"""What every call in a worker needs (set once per worker by ``_start``, not sent with each input)."""


def cpus() -> int:
    """The CPUs this process may run on (not the machine's count, which a container or affinity may cut)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def file_weight(path: Path) -> int:
    """A task's weight (see ``Runner``) when it reads a file: the file's bytes, 0 if it cannot be read (the
    task reports why); measuring a medium takes longer the larger it is."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def in_worker() -> bool:
    """Whether this process is one of a ``Runner``'s workers."""
    return _context is not None


def _start(context: Any) -> None:
    global _context
    _context = context
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call_all(fn: Callable[[Any, Task], Result], tasks: list[Task]) -> list[Result]:
    return [fn(_context, task) for task in tasks]


class Runner(Generic[Task, Result]):
    """``[fn(context, t) for t in tasks]`` for tasks given one by one with :meth:`add`; :meth:`results` waits.

    The pool starts at ``MIN_PARALLEL`` tasks, or earlier when ``weight`` is given (a task's size, in the
    caller's unit) and the tasks' weights reach ``MIN_PARALLEL_WEIGHT``.

    ``fn`` must be a module-level function (workers find it by name). Use as a context manager: leaving it
    stops the workers (pending inputs are dropped, running ones finish) before anything else happens.
    """

    def __init__(
        self,
        fn: Callable[[Any, Task], Result],
        context: Any,
        progress: Callable[[int, int], None] | None = None,
        workers: int | None = None,
        weight: Callable[[Task], int] | None = None,
    ) -> None:
        self.fn = fn
        self.weight = weight
        self.weighed = 0
        self.context = context
        self.progress = progress or (lambda done, total: None)
        self.workers = workers or cpus()
        self.pending: list[Task] = []
        self.sent: list[tuple[list[Task], Future[list[Result]]]] = []
        self.pool: ProcessPoolExecutor | None = None
        self.forking = True

    def __enter__(self) -> Runner[Task, Result]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def add(self, task: Task) -> None:
        self.pending.append(task)
        if self.pool is None and self.weight is not None:
            self.weighed += self.weight(task)
        if (
            self.pool is None
            and self.workers > 1
            and (len(self.pending) >= MIN_PARALLEL or self.weighed >= MIN_PARALLEL_WEIGHT)
        ):
            self.pool = self._open()
        if self.pool is not None and len(self.pending) >= CHUNK:
            self._send()

    def results(self) -> list[Result]:
        """Every task's result in order; an exception in ``fn`` is raised here (after :meth:`close`)."""
        done: list[Result] = []
        if self.pool is None:
            total = len(self.pending)
            for task in self.pending:
                done.append(self.fn(self.context, task))
                if len(done) % CHUNK == 0 or len(done) == total:
                    self.progress(len(done), total)
            self.pending = []
            return done
        self._send()
        total = sum(len(chunk) for chunk, _ in self.sent)
        try:
            for chunk, future in self.sent:
                try:
                    done += future.result()
                except BrokenProcessPool:
                    # a worker process ended abruptly (killed, out of memory, a library that cannot run in a
                    # child): the tasks are pure functions of their inputs, so this process does the rest
                    log.warning(
                        "a worker process ended abruptly; the remaining %d input(s) run here", total - len(done)
                    )
                    done += [self.fn(self.context, task) for task in chunk]
                self.progress(len(done), total)
        finally:
            self.close()
        return done

    @property
    def pooled(self) -> bool:
        """Whether the tasks went to worker processes (so far: the pool starts as tasks are added)."""
        return self.pool is not None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def _send(self) -> None:
        assert self.pool is not None
        with contextlib.nullcontext() if self.forking else _main_script_hidden():  # submitting starts workers
            for i in range(0, len(self.pending), CHUNK):
                chunk = self.pending[i : i + CHUNK]
                self.sent.append((chunk, self.pool.submit(_call_all, self.fn, chunk)))
        self.pending = []

    def _open(self) -> ProcessPoolExecutor:
        # fork shares what this process already imported and holds; with other threads running (a UI server)
        # a forked child could inherit a held lock, so such a process starts clean workers instead
        self.forking = threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("fork" if self.forking else "spawn"),
            initializer=_start,
            initargs=(self.context,),
        )


@contextmanager
def _main_script_hidden() -> Iterator[None]:
    """While workers are started clean, ``__main__`` is a blank module: a clean worker runs the parent's main
    script again, and when that is a Streamlit page (the UI, or a test that ran one) the page runs without
    its session and the worker dies. The tasks' functions are found by their module's name."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def run_all(
    fn: Callable[[Any, Task], Result],
    context: Any,
    tasks: Sequence[Task],
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
) -> list[Result]:
    """``[fn(context, t) for t in tasks]``, in worker processes when there are many tasks and several CPUs."""
    with Runner(fn, context, progress, workers) as runner:
        for task in tasks:
            runner.add(task)
        return runner.results()
