"""The gates a release build re-runs on its candidates, as a small registry of hooks.

Item-level gates take ``(workspace, candidate_ids)`` and return ``{item_id: [reason codes]}`` for the items
that fail; ``--allow-partial`` drops those (with their sisters: a group is released whole or not at all).
Workspace-level gates take ``(workspace)`` and return failure messages; any message refuses the build.
Another module plugs in with one line in :func:`default_gates` (imported lazily through :func:`lazy`).
Whether a gate's findings block is the workspace's one policy, ``[gates]`` (``Settings.gates.mode``), the
same the status derivation applies; a build reads gates and never writes gate rows.
"""

from __future__ import annotations

import importlib
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from curation.kinds import GateFinding
from curation.tables import Asset, Item
from curation.workspace import Workspace

ItemGate = Callable[[Workspace, Sequence[str]], Mapping[str, Any]]
"""``(workspace, candidate ids) -> {item: reason codes}`` (a list, or a ``curation.kinds.GateFinding``)."""
WorkspaceGate = Callable[[Workspace], list[str]]
Report = Callable[[Workspace, Sequence[str]], dict[str, Any] | None]


@dataclass(frozen=True)
class Gates:
    """Named hooks, run in order. ``reports`` take the released item ids and supply content, not decisions:
    ``agreement`` (figures for stats.json and the Croissant RAI fields) and ``duplicates``
    (``{"clusters": [...]}`` for duplicates.json)."""

    item: tuple[tuple[str, ItemGate], ...] = ()
    workspace: tuple[tuple[str, WorkspaceGate], ...] = ()
    reports: tuple[tuple[str, Report], ...] = ()
    imports: tuple[str, ...] = ()
    """Modules the hooks that run in the background (workspace gates, beside the media prefetch) import
    lazily. A build imports them on its own thread before any of them runs: two threads importing one package
    for the first time can break it (``KeyError: 'scipy'``). Modules only the build's own thread imports are
    left to their first use."""


def lazy(module: str, attribute: str) -> Callable[..., Any]:
    """A hook that imports ``module.attribute`` only when a build calls it (keeps `curate --help` fast)."""

    def call(*args: Any) -> Any:
        return getattr(importlib.import_module(module), attribute)(*args)

    call.__qualname__ = f"{module}.{attribute}"
    return call


def release_asset(assets: Mapping[str, Asset], derivatives: Mapping[str, Asset], sha: str) -> Asset:
    """The asset a release ships for a stored medium: its normalized derivative if there is one."""
    return derivatives.get(sha) or assets[sha]


def load_assets(ws: Workspace) -> tuple[dict[str, Asset], dict[str, Asset]]:
    """All assets by hash, and for each original its normalized derivative (the latest if several); loaded
    once per build (callers only read them)."""
    from .build_state import once_per_build

    return once_per_build(ws, "assets", lambda: _load_assets(ws))


def _load_assets(ws: Workspace) -> tuple[dict[str, Asset], dict[str, Asset]]:
    with ws.session() as s:
        assets = {a.sha256: a for a in s.execute(select(Asset).order_by(Asset.created_at, Asset.sha256)).scalars()}
    derivatives: dict[str, Asset] = {}
    for asset in assets.values():
        if asset.derived_from and str((asset.transform or {}).get("transform", "")).endswith("normalize"):
            derivatives[asset.derived_from] = asset
    return assets, derivatives


def _shipped_media(ws: Workspace, candidate_ids: Sequence[str]) -> Iterator[tuple[str, tuple[Asset, ...]]]:
    """Each candidate, in id order, with the image and audio assets a release would ship for it."""
    from .build_state import once_per_build

    assets, derivatives = load_assets(ws)
    wanted = set(candidate_ids)
    for item_id, image, audio in once_per_build(ws, "item_media", lambda: _item_media(ws)):
        if item_id in wanted:  # an item without a modality has no medium of it
            yield item_id, tuple(release_asset(assets, derivatives, sha) for sha in (image, audio) if sha)


def _item_media(ws: Workspace) -> list[tuple[str, str | None, str | None]]:
    """Every item's id, image and audio hash, in id order (read once per build: both media gates ask)."""
    with ws.session() as s:
        rows = s.execute(select(Item.id, Item.image, Item.audio).order_by(Item.id)).all()
    return [(item_id, image, audio) for item_id, image, audio in rows]


def media_files_gate(ws: Workspace, candidate_ids: Sequence[str]) -> dict[str, list[str]]:
    """Every medium a candidate would ship is in the store with its recorded size (``media:missing``); a file
    that sisters share is looked at once."""
    present: dict[str, bool] = {}
    failures: dict[str, list[str]] = {}
    for item_id, media in _shipped_media(ws, candidate_ids):
        for asset in media:
            found = present.get(asset.sha256)
            if found is None:
                found = present[asset.sha256] = _in_store(ws, asset)
            if not found:
                failures.setdefault(item_id, []).append("media:missing")
                break
    return failures


def _in_store(ws: Workspace, asset: Asset) -> bool:
    """The store holds a regular file of the asset's recorded size."""
    try:
        status = os.stat(ws.asset_path(asset))
    except OSError:
        return False
    return stat.S_ISREG(status.st_mode) and status.st_size == asset.size_bytes


def media_conformity_gate(ws: Workspace, candidate_ids: Sequence[str]) -> dict[str, list[str]]:
    """The media spec (``media:<problem>``) judged on the exact file each candidate would ship.

    Judged on the file's stored facts (``curation.audit.media_facts``), measured once per content hash: a
    rebuild decodes nothing. A file whose bytes no longer match its hash is refused by the copy step.
    """
    from curation.audit.media_facts import media_facts
    from curation.mediatools.facts import verdict

    shipped = list(_shipped_media(ws, candidate_ids))
    facts = media_facts(ws, {asset.sha256: asset for _, media in shipped for asset in media}.values())
    verdicts: dict[str, list[str]] = {}
    failures: dict[str, list[str]] = {}
    for item_id, media in shipped:
        for asset in media:
            if asset.sha256 not in facts:
                continue  # not in the store: media_files_gate reports it
            if asset.sha256 not in verdicts:
                name = asset.original_name or ws.asset_path(asset).name
                verdicts[asset.sha256] = verdict(asset.kind, facts[asset.sha256], name, ws.settings.media).reasons
            failures.setdefault(item_id, []).extend(verdicts[asset.sha256])
    return {item_id: sorted(set(reasons)) for item_id, reasons in failures.items() if reasons}


def _gated_statistics(ws: Workspace, reviewed: list[Any]) -> dict[str, Any]:
    """The gated agreement statistics of every reviewed item (``reviewed``: ``reviewed_items(ws)``), once per
    build: the agreement gate judges them, and the agreement figures publish them when the build releases
    every reviewed item."""
    from curation.agreement.review_agreement import gated_statistics

    from .build_state import once_per_build

    return once_per_build(ws, "gated_statistics", lambda: gated_statistics(reviewed))


def agreement_gate(ws: Workspace) -> list[str]:
    """The workspace's agreement thresholds (``[agreement]`` in curate.toml); a failure refuses the build."""
    from curation.agreement.gates import agreement_gate_failures

    from .build_state import reviewed_items

    items = reviewed_items(ws)
    gated = _gated_statistics(ws, items)
    return [failure.message for failure in agreement_gate_failures(items, ws.settings.agreement, gated)]


def agreement_figures(ws: Workspace, released: Sequence[str]) -> dict[str, Any]:
    """Inter-annotator agreement over the released items' reviews (answer check, audio, checklist), with
    TRIAD C.3's labels (tier tag, binary naturalness) per taxonomy leaf and on the audit subset."""
    from curation.agreement.review_agreement import workspace_agreement_report

    from .build_state import reviewed_items

    wanted = set(released)
    reviewed = reviewed_items(ws)
    items = [item for item in reviewed if item.id in wanted]
    gated = _gated_statistics(ws, reviewed) if len(items) == len(reviewed) else None  # the same items, figures
    return public_agreement(workspace_agreement_report(ws, items, gated=gated))


def public_agreement(report: Mapping[str, Any]) -> dict[str, Any]:
    """The figures a release publishes of an agreement report (``exports.reproduce`` recomputes them)."""
    answer = {k: v for k, v in report["answer_check"].items() if k != "pairs"}  # per-person pairs stay private
    return {
        "items": report["items"],
        "answer_check": answer,
        "audio_signoff": report["audio_signoff"],
        "subset_checklist": report["subset_checklist"],
        "tier_tag": report["tier_tag"],
        "naturalness": report["naturalness"],
        "per_leaf": report["per_leaf"],
        "audit_subset": report["audit_subset"],
    }


def audit_gate(ws: Workspace, candidate_ids: Sequence[str]) -> dict[str, list[str]]:
    """Re-run the duplicate and leak audits; unresolved clusters and leaks block (``duplicate:``, ``leak:``)."""
    from curation.audit.workspace import resolutions, run_workspace_audit

    from .build_state import derived

    discarded = {st.id for st in derived(ws).statuses if st.state == "discarded"}
    report, _ = run_workspace_audit(ws, discarded=discarded)  # never stored: a build writes no gate rows
    reasons = report.gate_reasons(resolutions(ws))
    return {item_id: reasons[item_id] for item_id in candidate_ids if reasons.get(item_id)}


def duplicates_report(ws: Workspace, released: Sequence[str]) -> dict[str, Any]:
    """duplicates.json: every cluster touching the release, with the maintainer's decision on it."""
    from curation.audit.workspace import resolutions, stored_report

    report, _ = stored_report(ws)
    decided = {r.target: r for r in resolutions(ws)}
    clusters = []
    for cluster in report.clusters:
        decision = decided.get(cluster.id)
        entry = cluster.to_dict()
        entry["resolution"] = (
            {"keep": decision.keep, "distinct": decision.distinct, "reason": decision.reason} if decision else None
        )
        clusters.append(entry)
    return {"clusters": clusters}


def default_gates() -> Gates:
    """The gates every `curate release build` runs (blocking as ``[gates]`` says)."""
    return Gates(
        item=(
            ("media_files", media_files_gate),
            ("media_conformity", media_conformity_gate),
            ("audit", audit_gate),
            ("consent", lazy("curation.audio_production.gates", "consent_gate")),
            ("takes", lazy("curation.audio_production.gates", "takes_gate")),
            ("spot_check", lazy("curation.audio_production.gates", "spot_check_gate")),
            ("recording", lazy("curation.audio_production.gates", "recording_gate")),
        ),
        workspace=(("agreement", agreement_gate),),
        reports=(
            ("agreement", agreement_figures),
            ("leaf_agreement", lazy("exports.leaf_agreement", "leaf_agreement_report")),
            ("duplicates", duplicates_report),
        ),
        # what the agreement gate imports on the background thread. The media libraries (pyloudnorm brings
        # SciPy's signal and stats: 0.7 s) are imported by the build's own thread, only when a medium's facts
        # are not stored yet, and scikit-learn by none: importing them all up front made a first build 1.2 s
        # longer
        imports=(
            "krippendorff",
            "curation.mediatools",
            "curation.agreement.gates",
            "curation.agreement.review_agreement",
            "curation.agreement.leaf_tables",
            "curation.audit.workspace",
            "curation.audit.media_facts",
        ),
    )


def run_item_gates(
    ws: Workspace, gates: Gates, candidates: Sequence[str], groups: Mapping[str, str]
) -> dict[str, list[str]]:
    """Reasons per failing candidate; a failing item holds its candidate sisters (``group:sister_pending``)."""
    failures: dict[str, set[str]] = {}
    for name, gate in gates.item:
        if ws.settings.gates.mode(name) != "block":  # the one blocking policy, as at admission
            continue
        for item_id, found in gate(ws, list(candidates)).items():
            reasons = found.reasons if isinstance(found, GateFinding) else found
            if reasons:
                failures.setdefault(item_id, set()).update(reasons)
    failing_groups = {groups[i] for i in failures}
    for item_id in candidates:
        if groups[item_id] in failing_groups and item_id not in failures:
            failures[item_id] = {"group:sister_pending"}
    return {item_id: sorted(reasons) for item_id, reasons in sorted(failures.items())}


def run_workspace_gates(ws: Workspace, gates: Gates) -> list[str]:
    return [f"{name}: {message}" for name, gate in gates.workspace for message in gate(ws)]


def run_reports(ws: Workspace, gates: Gates, released: Sequence[str]) -> dict[str, Any]:
    reports = {}
    for name, report in gates.reports:
        result = report(ws, list(released))
        if result is not None:
            reports[name] = result
    return reports
