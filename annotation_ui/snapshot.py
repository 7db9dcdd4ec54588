"""A derived view of the whole workspace, recomputed only when the workspace changes.

Deriving every item's status is linear in the number of items; the pages read it on every rerun.
A snapshot is keyed by a cheap stamp (the last event id and the gate results' latest update), so a
page render costs a page of rows, not a pass over 10,000 items, until something changes.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from curation.derived import DerivedState, load_derived
from curation.kinds import kind_statuses
from curation.review_queues import QueueReport
from curation.tables import Event, GateResult, Item
from curation.workflow import ItemFacts, ItemStatus, StatusInputs
from curation.workspace import Workspace


def workspace_stamp(ws: Workspace) -> tuple[Any, ...]:
    """Changes whenever anything the derived state depends on changes (every change writes an event)."""
    with ws.session() as s:
        last_event = s.execute(select(func.max(Event.id))).scalar()
        gates = s.execute(select(func.count(), func.max(GateResult.updated_at)).select_from(GateResult)).one()
    return (last_event, gates[0], str(gates[1]))


@dataclass
class Snapshot:
    """Item facts and statuses at one stamp, indexed the ways the pages need them."""

    stamp: tuple[Any, ...]
    facts: dict[str, ItemFacts]
    perturbed: dict[str, str]
    statuses: list[ItemStatus]
    taxonomy: dict[str, dict[str, str]]
    workload: dict[str, Counter[str]]
    derived: DerivedState | None = None
    """The read model the statuses came from (records that count, group records, checklists)."""
    kind_statuses: list[ItemStatus] = field(default_factory=list)
    """Units of kinds that live apart from the ``item`` table (judge tasks): the dashboard counts them."""
    status_by_id: dict[str, ItemStatus] = field(init=False)
    sisters: dict[str, list[str]] = field(init=False)
    queues: dict[tuple[str, str], QueueReport] = field(init=False, default_factory=dict)
    """(stage, reviewer) -> that reviewer's queue at this stamp: paging a queue re-derives nothing."""

    def __post_init__(self) -> None:
        self.status_by_id = {st.id: st for st in self.statuses}
        self.sisters = {}
        for item in self.facts.values():
            self.sisters.setdefault(item.group, []).append(item.id)

    def live_sisters(self, group: str) -> list[ItemFacts]:
        """The group's items that are not discarded, in id order."""
        return [self.facts[i] for i in self.sisters.get(group, []) if self.status_by_id[i].state != "discarded"]

    def group_rule_reasons(self, ws: Workspace, group: str) -> list[str]:
        """The automatic group checks (TRIAD C.2 step 6), from the workflow's own rules."""
        assert self.derived is not None
        return self.derived.group_rules(group)


def load_snapshot(ws: Workspace, stamp: tuple[Any, ...] | None = None) -> Snapshot:
    """Everything the pages read, loaded in one session (what ``derive_status`` loads, whose facts the
    snapshot keeps instead of loading them twice, and the taxonomy)."""
    stamp = workspace_stamp(ws) if stamp is None else stamp
    with ws.session() as s:
        inputs = StatusInputs.load(s)
        taxonomy = {row[0]: row[1] for row in s.execute(select(Item.id, Item.taxonomy))}
    state = load_derived(ws, inputs)
    workload: dict[str, Counter[str]] = {}
    for record in inputs.records:
        workload.setdefault(record.reviewer, Counter())[record.stage] += 1
    apart = kind_statuses(ws)
    return Snapshot(stamp, state.facts, inputs.perturbed, state.statuses, taxonomy, workload, state, apart)


class SnapshotCache:
    """The latest snapshot of one workspace, shared by every browser session of the app."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None

    def get(self) -> Snapshot:
        stamp = workspace_stamp(self.ws)
        with self._lock:
            if self._snapshot is None or self._snapshot.stamp != stamp:
                self._snapshot = load_snapshot(self.ws, stamp)
            return self._snapshot

    def is_fresh(self) -> bool:
        """Whether ``get`` will answer without recomputing (the UI shows progress otherwise)."""
        return self._snapshot is not None and self._snapshot.stamp == workspace_stamp(self.ws)
