"""The maintainer dashboard's figures, computed once per snapshot (plain data, no Streamlit)."""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.kinds import kind_of, kinds
from curation.kinds.mcq import MCQ
from curation.staffing import summary
from curation.tables import GateResult, Item
from curation.taxonomy import TAXONOMY
from curation.vocab import MODALITIES, STATES
from curation.workflow import funnel
from curation.workspace import Workspace

from .snapshot import Snapshot


@dataclass(frozen=True)
class LeafCount:
    modality: str
    leaf: str
    items: int


@dataclass(frozen=True)
class DashboardData:
    kind: str
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
    staffing: list[dict[str, Any]] = field(default_factory=list)
    """Stages the workspace's reviewers cannot staff under the rule, with the fix (``curation.staffing``)."""


def kinds_present(snap: Snapshot) -> list[str]:
    """The kinds that have units in the workspace, in the registry's order (mcq first)."""
    present = {st.kind for st in snap.statuses} | {st.kind for st in snap.kind_statuses}
    return [k.name for k in kinds() if k.name in present]


def dashboard_data(snap: Snapshot, kind: str = "mcq") -> DashboardData:
    """Funnel, admission rate, reasons, taxonomy leaf counts, group sizes and reviewers' workload of one kind:
    a kind's units reach only its own stages, and only mcq items have TRIAD taxonomy leaves."""
    units = [st for st in snap.statuses + snap.kind_statuses if st.kind == kind]
    f = funnel(units)
    live = [st for st in units if st.state != "discarded"]
    stages = kind_of(kind).stage_names
    order = {stage: n for n, stage in enumerate(stages)}
    per_leaf: Counter[tuple[str, str]] = Counter()
    if kind == MCQ.name:
        for st in live:
            leaves_of = snap.taxonomy.get(st.id) or {}
            per_leaf.update((m, leaves_of[m]) for m in MODALITIES if leaves_of.get(m))
    leaves = [LeafCount(m, leaf, per_leaf.get((m, leaf), 0)) for m in MODALITIES for leaf in TAXONOMY[m]]
    reached = {  # pending there, failed there, or past it
        stage: sum(
            1 for st in live if st.state in ("held", "admitted") or order.get(st.stage or "", -1) >= order[stage]
        )
        for stage in stages
    }
    in_items = {st.id for st in units if st.id in snap.status_by_id}
    sizes = Counter(Counter(st.group for st in live if st.id in in_items).values())
    workload = [
        {"reviewer": name, **{stage: counts.get(stage, 0) for stage in stages}, "total": sum(counts[s] for s in stages)}
        for name, counts in sorted(snap.workload.items())
        if any(counts.get(stage) for stage in stages)
    ]
    return DashboardData(
        kind=kind,
        total=f["total"],
        states={state: f["states"].get(state, 0) for state in STATES},
        reached=reached,
        stages={stage: f["stages"].get(stage, {}) for stage in stages},
        admission_rate=f["admission_rate"],
        reasons=[(r["reason"], r["count"]) for r in f["reasons"]],
        leaves=leaves,
        group_sizes=dict(sorted(sizes.items())),
        workload=workload,
        staffing=summary(snap.derived.staffing) if snap.derived is not None and kind == MCQ.name else [],
    )


def item_ids(snap: Snapshot, state: str | None = None, kind: str | None = None) -> list[str]:
    """Ids for the dashboard's item table, optionally of one state and one kind (the caller pages them)."""
    return [st.id for st in snap.statuses if (state is None or st.state == state) and (kind is None or st.kind == kind)]


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
    """One DashboardData per snapshot and kind: a rerun of an unchanged workspace does no aggregation."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._data: dict[str, DashboardData] = {}

    def is_fresh(self, snap: Snapshot, kind: str = "mcq") -> bool:
        return self._key == snap.stamp and kind in self._data

    def get(self, snap: Snapshot, kind: str = "mcq") -> DashboardData:
        if self._key != snap.stamp:
            self._data, self._key = {}, snap.stamp
        if kind not in self._data:
            self._data[kind] = dashboard_data(snap, kind)
        return self._data[kind]


@dataclass(frozen=True)
class GatesData:
    """What the release gates will say: agreement figures and thresholds, the adjudication queue, duplicate
    clusters and leaks with their decisions, and the probe checker's verdicts."""

    agreement: list[dict[str, Any]]
    agreement_failures: list[str]
    adjudication: list[dict[str, Any]]
    clusters: list[dict[str, Any]]
    leaks: list[dict[str, Any]]
    probe_verdicts: dict[str, int]
    report: dict[str, Any]
    """The agreement report the figures come from (what :func:`agreement_plots` draws, on request)."""


def _figure(name: str, result: dict[str, Any], threshold: float | None = None) -> dict[str, Any]:
    """One agreement figure beside its release threshold (``None``: reported only, no gate)."""
    value = result.get("value")
    return {
        "statistic": name,
        "value": None if value is None else round(value, 3),
        "threshold": "reported, no gate" if threshold is None else f"≥ {threshold:.3f}",
        "note": result.get("undefined") or "",
    }


def gates_data(ws: Workspace, snap: Snapshot | None = None) -> GatesData:
    """Read from the stored review records and gate results; runs no audit and no model.

    The reviewed items are read once (from the snapshot's derived state when given) and serve the report,
    the agreement gates and the adjudication queue alike.
    """
    from curation.agreement.gates import active_thresholds, adjudication_entries, agreement_gate_failures
    from curation.agreement.review_agreement import load_reviewed_items, workspace_agreement_report
    from curation.audit.workspace import resolutions, stored_report

    reviewed = load_reviewed_items(ws, snap.derived if snap is not None else None)
    report = workspace_agreement_report(ws, reviewed)
    gates = active_thresholds(ws.settings.agreement)
    figures = [
        _figure("blind answer vs label: Cohen's κ", report["answer_check"]["overall"], gates.get("answer_kappa_min"))
    ]
    figures.append(
        _figure("subset checklist: α, all views", report["subset_checklist"]["all"], gates.get("checklist_alpha_min"))
    )
    figures += [
        _figure(f"subset checklist: α, {view}", result) for view, result in report["subset_checklist"]["views"].items()
    ]
    figures += [
        _figure(f"audio sign-off: ordinal α, {axis}", result, gates.get("audio_alpha_min"))
        for axis, result in report["audio_signoff"].items()
    ]
    figures.append(_figure("ambiguity tier tag: Cohen's κ (TRIAD C.3)", report["tier_tag"]["overall"]))
    figures.append(_figure("binary naturalness: Cohen's κ (TRIAD C.3)", report["naturalness"]))
    audit, _ = stored_report(ws)
    decided = {r.target: r for r in resolutions(ws)}

    def decision(target: str) -> str:
        r = decided.get(target)
        if r is None:
            return "unresolved"
        return f"distinct: {r.reason}" if r.distinct else f"keep {r.keep}"

    clusters = [
        {
            "cluster": c.id,
            "items": ", ".join(c.items),
            "evidence": ", ".join(sorted({f"{e.modality} {e.method}" for e in c.edges})),
            "decision": decision(c.id),
        }
        for c in audit.clusters
    ]
    leaks = [
        {"leak": leak.id, "kind": leak.kind, "items": ", ".join(leak.items), "decision": decision(leak.id)}
        for leak in audit.leaks
    ]
    with ws.session() as s:
        current = dict(s.execute(select(Item.id, Item.content_hash)).all())
        rows = s.execute(select(GateResult).where(GateResult.gate == "probe")).scalars().all()
    verdicts = Counter(
        (row.details or {}).get("result", {}).get("verdict", "unknown")
        for row in rows
        if current.get(row.item_id) == row.content_hash
    )
    settings = ws.settings.agreement
    return GatesData(
        report=report,
        agreement=figures,
        agreement_failures=[failure.message for failure in agreement_gate_failures(reviewed, settings, report)],
        adjudication=[
            {"item": e.item, "stage": e.stage, "reasons": ", ".join(e.reasons)}
            for e in adjudication_entries(reviewed, settings)
        ],
        clusters=clusters,
        leaks=leaks,
        probe_verdicts=dict(sorted(verdicts.items())),
    )


def agreement_plots(ws: Workspace, gates: GatesData) -> list[tuple[str, bytes]]:
    """(title, PNG) — the disagreement heatmaps and per-view / per-leaf agreement bars. Drawing them costs
    seconds, so the dashboard draws them only when asked."""
    from curation.agreement.gates import active_thresholds
    from curation.agreement.plots import write_plots

    with tempfile.TemporaryDirectory() as tmp:
        return [
            (path.stem.replace("_", " "), path.read_bytes())
            for path in write_plots(gates.report, Path(tmp), active_thresholds(ws.settings.agreement))
        ]


class GatesCache:
    """One GatesData per snapshot, like DashboardCache; the plots once per snapshot too, when asked."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._data: GatesData | None = None
        self._plots: tuple[tuple[Any, ...], list[tuple[str, bytes]]] | None = None

    def is_fresh(self, snap: Snapshot) -> bool:
        return self._data is not None and self._key == snap.stamp

    def get(self, ws: Workspace, snap: Snapshot) -> GatesData:
        if not self.is_fresh(snap):
            self._data = gates_data(ws, snap)
            self._key = snap.stamp
        assert self._data is not None
        return self._data

    def plots(self, ws: Workspace, snap: Snapshot) -> list[tuple[str, bytes]]:
        if self._plots is None or self._plots[0] != snap.stamp:
            self._plots = (snap.stamp, agreement_plots(ws, self.get(ws, snap)))
        return self._plots[1]
