"""One function over many inputs, in a pool of worker processes sized to the CPUs, or in this process when the
inputs are few (a pool costs more to start than a small import takes).

Results come back in input order, so a caller reports problems in the order of its input whichever way ran.
The workers ignore Ctrl-C: the caller alone stops, waits for its workers (none writes after it returns) and then
undoes what they made.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any, TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")

MIN_PARALLEL = 200
"""Fewer inputs than this run in this process (starting the pool would cost more than it saves)."""
CHUNK = 32
"""Inputs per message to a worker: large enough that the messages cost little, small enough to share out."""

_context: Any = None
"""What every call in a worker needs (set once per worker by ``_start``, not sent with each input)."""


def cpus() -> int:
    """The CPUs this process may run on (not the machine's count, which a container or affinity may cut)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def _start(context: Any) -> None:
    global _context
    _context = context
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(fn: Callable[[Any, Task], Result], task: Task) -> Result:
    return fn(_context, task)


def run_all(
    fn: Callable[[Any, Task], Result],
    context: Any,
    tasks: Sequence[Task],
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
) -> list[Result]:
    """``[fn(context, t) for t in tasks]``, in worker processes when there are many tasks and several CPUs.

    ``fn`` must be a module-level function (workers find it by name); ``progress(done, total)`` is called in
    this process as results arrive. An exception in ``fn`` is raised here, after every worker has stopped.
    """
    total = len(tasks)
    report = progress or (lambda done, total: None)
    workers = workers or cpus()
    if workers < 2 or total < MIN_PARALLEL:
        results = []
        for done, task in enumerate(tasks, 1):
            results.append(fn(context, task))
            if done % CHUNK == 0 or done == total:
                report(done, total)
        return results
    # fork shares what this process already imported and holds; with other threads running (a UI server)
    # a forked child could inherit a held lock, so such a process starts clean workers instead
    method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() else "spawn"
    pool = ProcessPoolExecutor(
        max_workers=min(workers, -(-total // CHUNK)),
        mp_context=multiprocessing.get_context(method),
        initializer=_start,
        initargs=(context,),
    )
    results = []
    try:
        for result in pool.map(partial(_call, fn), tasks, chunksize=CHUNK):
            results.append(result)
            if len(results) % CHUNK == 0 or len(results) == total:
                report(len(results), total)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return results
