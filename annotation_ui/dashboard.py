"""The maintainer dashboard's figures, computed once per snapshot (plain data, no Streamlit)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from curation.taxonomy import TAXONOMY
from curation.vocab import MODALITIES, STAGES, STATES
from curation.workflow import funnel

from .snapshot import Snapshot


@dataclass(frozen=True)
class LeafCount:
    modality: str
    leaf: str
    items: int


@dataclass(frozen=True)
class DashboardData:
    total: int
    states: dict[str, int]
    reached: dict[str, int]
    """Stage -> live items that got to it (pending there, failed there, or past it): the funnel."""
    stages: dict[str, dict[str, int]]
    admission_rate: float | None
    reasons: list[tuple[str, int]]
    leaves: list[LeafCount]
    group_sizes: dict[int, int]
    """Group size -> number of groups of that size (discarded sisters not counted)."""
    workload: list[dict[str, Any]]


def dashboard_data(snap: Snapshot) -> DashboardData:
    """Funnel, admission rate, reasons, taxonomy leaf counts, group sizes and reviewers' workload."""
    f = funnel(snap.statuses)
    live = [st for st in snap.statuses if st.state != "discarded"]
    per_leaf = Counter((m, snap.taxonomy[st.id][m]) for st in live for m in MODALITIES if st.id in snap.taxonomy)
    leaves = [LeafCount(m, leaf, per_leaf.get((m, leaf), 0)) for m in MODALITIES for leaf in TAXONOMY[m]]
    order = {stage: n for n, stage in enumerate(STAGES)}
    reached = {
        stage: sum(
            1 for st in live if st.state in ("held", "admitted") or order.get(st.stage or "", -1) >= order[stage]
        )
        for stage in STAGES
    }
    sizes = Counter(Counter(st.group for st in live).values())
    workload = [
        {"reviewer": name, **{stage: counts.get(stage, 0) for stage in STAGES}, "total": sum(counts.values())}
        for name, counts in sorted(snap.workload.items())
    ]
    return DashboardData(
        total=f["total"],
        states={state: f["states"].get(state, 0) for state in STATES},
        reached=reached,
        stages=f["stages"],
        admission_rate=f["admission_rate"],
        reasons=[(r["reason"], r["count"]) for r in f["reasons"]],
        leaves=leaves,
        group_sizes=dict(sorted(sizes.items())),
        workload=workload,
    )


def item_ids(snap: Snapshot, state: str | None = None) -> list[str]:
    """Ids for the dashboard's item table, optionally of one state (the caller pages them)."""
    return [st.id for st in snap.statuses if state is None or st.state == state]


def item_rows(snap: Snapshot, ids: list[str]) -> list[dict[str, Any]]:
    """Table rows of one page of items."""
    rows = []
    for item_id in ids:
        st = snap.status_by_id[item_id]
        rows.append(
            {
                "item": st.id,
                "group": st.group,
                "author": snap.facts[st.id].author,
                "state": st.state,
                "stage": st.stage or "",
                "reasons": ", ".join(st.reasons),
            }
        )
    return rows


class DashboardCache:
    """One DashboardData per snapshot: a rerun of an unchanged workspace does no aggregation."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._data: DashboardData | None = None

    def get(self, snap: Snapshot) -> DashboardData:
        if self._data is None or self._key != snap.stamp:
            self._data = dashboard_data(snap)
            self._key = snap.stamp
        return self._data
