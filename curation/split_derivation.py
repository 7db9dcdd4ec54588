"""Deriving a large workspace's statuses on two cores: ``curate status`` and ``curate funnel`` at 10,000 items.

A group's statuses depend only on its own items and their records (``StatusInputs.of_groups``), so the groups
are split into two halves of about equal size after one load (one snapshot of the workspace). A forked child
derives the second half from the facts it inherited, without touching the database, and hands its statuses
and staffing gaps back through a pipe; the parent derives the first half meanwhile. The child exits without
the interpreter's teardown: freeing what it built is the operating system's work, not a second's.

Only a process with a single thread forks (a thread holding a lock at the fork would leave the child stuck),
only where ``fork`` exists, and only for workspaces large enough for the second core to pay for the fork and
the hand-over. If the child fails, the parent derives the second half itself, raising what it raised.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections import Counter

from .staffing import StaffingGap
from .workflow import ItemStatus, StatusInputs

__all__ = ["SPLIT_FROM", "derive_statuses", "halves"]

SPLIT_FROM = 4000
"""Items from which the derivation is split: below, forking and handing over cost more than the second core
saves (at 10,000 items with 7 records each it saves about a quarter of the derivation)."""

Derived = tuple[list[ItemStatus], dict[str, StaffingGap]]


def halves(inputs: StatusInputs) -> tuple[StatusInputs, StatusInputs] | None:
    """The inputs split by group into two parts of about equal numbers of items; None when one group holds
    so many items that one part would be empty."""
    sizes = Counter(item.group for item in inputs.items)
    first: set[str] = set()
    taken = 0
    for group, size in sizes.items():
        if 2 * taken >= len(inputs.items):
            break
        first.add(group)
        taken += size
    if taken == len(inputs.items):
        return None
    return inputs.of_groups(first), inputs.of_groups(sizes.keys() - first)


def _single_threaded() -> bool:
    return threading.active_count() == 1


def _can_fork() -> bool:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return hasattr(os, "fork") and cores > 1 and _single_threaded()


def derive_statuses(ws, inputs: StatusInputs | None = None) -> Derived:  # type: ignore[no-untyped-def]
    """Every item's status in id order and the staffing gaps, as ``inputs.derive_with_staffing(ws)`` gives
    them, on two cores when the workspace is large (``SPLIT_FROM``) and this process may fork. ``inputs``:
    loaded here when the caller has not."""
    if inputs is None:
        with ws.session() as session:
            inputs = StatusInputs.load(session)
    parts = halves(inputs) if len(inputs.items) >= SPLIT_FROM and _can_fork() else None
    if parts is None:
        return inputs.derive_with_staffing(ws)
    first, second = parts
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's coverage is not collected: it never returns)
        os.close(read)
        _derive_in_child(ws, second, write)
    os.close(write)
    try:
        statuses, gaps = first.derive_with_staffing(ws)
    finally:
        with os.fdopen(read, "rb") as pipe:
            handed = pipe.read()
        _, exit_status = os.waitpid(child, 0)
    if exit_status == 0 and handed:
        other_statuses, other_gaps = pickle.loads(handed)  # noqa: S301 (written by this process's own fork)
    else:
        other_statuses, other_gaps = second.derive_with_staffing(ws)
    return _merged(inputs, statuses + other_statuses, gaps | other_gaps)


def _derive_in_child(ws, part: StatusInputs, write: int) -> None:  # type: ignore[no-untyped-def]  # pragma: no cover
    """The child's whole life: derive ``part``, write it to the pipe, and exit (1 on any failure)."""
    code = 1
    try:
        handed = pickle.dumps(part.derive_with_staffing(ws), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write, "wb") as pipe:
            pipe.write(handed)
        code = 0
    finally:
        os._exit(code)


def _merged(inputs: StatusInputs, statuses: list[ItemStatus], gaps: dict[str, StaffingGap]) -> Derived:
    """The two halves' results in the whole derivation's order: statuses in item order, gaps in status order."""
    position = {item.id: n for n, item in enumerate(inputs.items)}
    statuses.sort(key=lambda st: position[st.id])
    return statuses, {st.id: gaps[st.id] for st in statuses if st.id in gaps}
