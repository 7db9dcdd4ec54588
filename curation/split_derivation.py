"""Deriving a large workspace's statuses on two cores: ``curate status`` and ``curate funnel`` at 10,000 items.

A group's statuses depend only on its own items and their records, so the groups are split into two halves of
about equal size after one read of the workspace (one snapshot). The items and records are read as plain rows
and split before their facts are built (``StatusRows``): a forked child builds the second half's facts and
derives them, without touching the database, and hands its statuses and staffing gaps back through a pipe;
the parent builds and derives the first half meanwhile. Neither builds, nor so writes to, the other half's
objects: every page a process writes after the fork is copied for it. The child exits without the
interpreter's teardown: freeing what it built is the operating system's work, not a second's.

Only a process with a single thread forks (a thread holding a lock at the fork would leave the child stuck),
only where ``fork`` exists, and only for workspaces large enough for the second core to pay for the fork and
the hand-over. If the child fails, the parent derives the second half itself, raising what it raised.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

from .authorship import former_authors
from .bulk import collector_paused
from .fact_loading import item_rows, items_of_rows, perturbed_modalities, record_rows, records_of_rows
from .staffing import StaffingGap
from .workflow import ItemStatus, StatusInputs

__all__ = ["SPLIT_FROM", "Derived", "StatusRows", "derive_statuses", "halves", "merged"]

SPLIT_FROM = 4000
"""Items from which the derivation is split: below, forking and handing over cost more than the second core
saves (at 10,000 items with 7 records each it saves about a quarter of the derivation)."""

Derived = tuple[list[ItemStatus], dict[str, StaffingGap]]


class StatusRows(NamedTuple):
    """A workspace's items and review records as the rows read, and the rest of a derivation's inputs: what
    ``StatusInputs.load`` reads, before the items' and records' facts are built (``facts``)."""

    items: Sequence[Any]
    """``fact_loading.item_rows``: id and group first, in id order."""
    records: Sequence[Any]
    """``fact_loading.record_rows``: subject first."""
    former: Mapping[str, frozenset[str]]
    """Item -> its former authors."""
    rest: StatusInputs
    """Everything else, with no items or records."""

    @classmethod
    def load(cls, session) -> StatusRows:  # type: ignore[no-untyped-def]
        with collector_paused():
            items, records = item_rows(session), record_rows(session)
            rest = StatusInputs.completed(session, [], perturbed_modalities(session), [])
            return cls(items, records, former_authors(session), rest)

    def facts(self) -> StatusInputs:
        """The inputs ``StatusInputs.load`` would have read: these rows' facts, and the rest."""
        with collector_paused():
            return self.rest._replace(
                items=items_of_rows(self.items, self.former), records=records_of_rows(self.records)
            )

    def of_groups(self, groups: Collection[str]) -> StatusRows:
        """These rows restricted to the items of ``groups``: what a derivation of those items alone reads. A
        group's statuses depend only on its own items, their records, its group records, and the decisions and
        gate results about its items, so a derivation of the part gives those items what one of the whole
        would."""
        items = [r for r in self.items if r[1] in groups]
        ids = {r[0] for r in items}
        subjects = {f"item:{i}" for i in ids} | {f"group:{g}" for g in groups}
        return self._replace(
            items=items, records=[r for r in self.records if r[0] in subjects], rest=self.rest.about(groups, ids)
        )


def halves(rows: StatusRows) -> tuple[StatusRows, StatusRows] | None:
    """The rows split by group into two parts of about equal numbers of items; None when one group holds
    so many items that one part would be empty."""
    sizes = Counter(r[1] for r in rows.items)
    first: set[str] = set()
    taken = 0
    for group, size in sizes.items():
        if 2 * taken >= len(rows.items):
            break
        first.add(group)
        taken += size
    if taken == len(rows.items):
        return None
    return rows.of_groups(first), rows.of_groups(sizes.keys() - first)


def _single_threaded() -> bool:
    return threading.active_count() == 1


def _can_fork() -> bool:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return hasattr(os, "fork") and cores > 1 and _single_threaded()


def derive_statuses(  # type: ignore[no-untyped-def]
    ws, rows: StatusRows | None = None, meanwhile: Callable[[], object] | None = None
) -> Derived:
    """Every item's status in id order and the staffing gaps, as ``StatusInputs.derive_with_staffing`` gives
    them, on two cores when the workspace is large (``SPLIT_FROM``) and this process may fork. ``rows``: read
    here when the caller has not. ``meanwhile``: the caller's own work, done while the child finishes its
    half (the parent's half is done first: the child's also has to be handed over); after the derivation when
    there is no child."""
    if rows is None:
        with ws.session() as session:
            rows = StatusRows.load(session)
    parts = halves(rows) if len(rows.items) >= SPLIT_FROM and _can_fork() else None
    if parts is None:
        derived = rows.facts().derive_with_staffing(ws)
        if meanwhile is not None:
            meanwhile()
        return derived
    first, second = parts
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's coverage is not collected: it never returns)
        os.close(read)
        _derive_in_child(ws, second, write)
    os.close(write)
    try:
        statuses, gaps = first.facts().derive_with_staffing(ws)
        if meanwhile is not None:
            meanwhile()
    finally:
        with os.fdopen(read, "rb") as pipe:
            handed = pipe.read()
        _, exit_status = os.waitpid(child, 0)
    if exit_status == 0 and handed:
        other_statuses, other_gaps = pickle.loads(handed)  # noqa: S301 (written by this process's own fork)
    else:
        other_statuses, other_gaps = second.facts().derive_with_staffing(ws)
    return merged(rows, statuses + other_statuses, gaps | other_gaps)


def _derive_in_child(ws, part: StatusRows, write: int) -> None:  # type: ignore[no-untyped-def]  # pragma: no cover
    """The child's whole life: build ``part``'s facts, derive them, write the result to the pipe, and exit (1 on
    any failure)."""
    code = 1
    try:
        handed = pickle.dumps(part.facts().derive_with_staffing(ws), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write, "wb") as pipe:
            pipe.write(handed)
        code = 0
    finally:
        os._exit(code)


def merged(rows: StatusRows, statuses: list[ItemStatus], gaps: dict[str, StaffingGap]) -> Derived:
    """The two halves' results in the whole derivation's order: statuses in item order, gaps in status order."""
    position = {r[0]: n for n, r in enumerate(rows.items)}
    statuses.sort(key=lambda st: position[st.id])
    return statuses, {st.id: gaps[st.id] for st in statuses if st.id in gaps}
