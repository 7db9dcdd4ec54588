"""One derivation per release build: the build's gates, reports and snapshot read the state it derived.

Without it, a build derived every item's status five times (the statuses, the snapshot, the agreement gate,
the agreement figures, the per-leaf tables), and loaded the reviewed items three times. The build pins the
state it derived while it runs; outside a build each reader loads its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from curation.derived import DerivedState, load_derived
from curation.workflow import Derivation, StatusInputs
from curation.workspace import Workspace

_lock = threading.Lock()
_pinned: dict[int, tuple[Workspace, DerivedState, dict[str, Any]]] = {}
"""id(workspace) -> the workspace, the state its running build derived, and what was computed from it."""
T = TypeVar("T")


@contextmanager
def pinned(ws: Workspace, state: DerivedState) -> Iterator[None]:
    """While the block runs, :func:`derived` and :func:`reviewed_items` of ``ws`` answer from ``state``."""
    with _lock:
        _pinned[id(ws)] = (ws, state, {})
    try:
        yield
    finally:
        with _lock:
            _pinned.pop(id(ws), None)


def _entry(ws: Workspace) -> tuple[Workspace, DerivedState, dict[str, Any]] | None:
    with _lock:
        entry = _pinned.get(id(ws))
    return entry if entry is not None and entry[0] is ws else None


def derived(ws: Workspace) -> DerivedState:
    """The running build's derived state, else a fresh one."""
    entry = _entry(ws)
    return entry[1] if entry is not None else load_derived(ws)


def derivation(ws: Workspace, inputs: StatusInputs) -> Derivation:
    """The running build's derivation when it derived ``inputs`` (its records that count are already found),
    else a fresh one of ``inputs``: the admission record judges every stage of every unit again."""
    entry = _entry(ws)
    if entry is not None and entry[1].inputs is inputs:
        return entry[1].derivation
    return inputs.derivation(ws)


def reviewed_items(ws: Workspace) -> list[Any]:
    """Every live item with its valid review records (``curation.agreement``), loaded once per build."""
    from curation.agreement.review_agreement import load_reviewed_items

    entry = _entry(ws)
    if entry is None:
        return load_reviewed_items(ws)
    state = entry[1]  # the agreement gate (a background thread) and the reports ask for the same list
    return list(once_per_build(ws, "reviewed", lambda: load_reviewed_items(ws, state)))


def once_per_build(ws: Workspace, key: str, compute: Callable[[], T]) -> T:
    """``compute()``, once per running build of ``ws`` (the store's assets: three gates and the snapshot read
    them; the gated agreement statistics: the agreement gate and the figures); outside a build, every call
    computes."""
    entry = _entry(ws)
    if entry is None:
        return compute()
    memo = entry[2]
    with _lock:  # one lock per key: a thread computing one thing does not hold up a thread asking for another
        computing = memo.setdefault(f"computing:{key}", threading.Lock())
    with computing:  # a second thread asking for the same thing waits for the first
        if key not in memo:
            memo[key] = compute()
        return memo[key]  # type: ignore[no-any-return]
