"""The audit over a workspace: signatures cached per asset, gate results per item, resolutions as events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import String, select, type_coerce
from sqlmodel import col

from curation.errors import MediaError, NotFoundError, Problem, ValidationFailed
from curation.facts import json_column, json_reader
from curation.notes import item_notes
from curation.tables import Asset, Event, GateResult, Item
from curation.vocab import MODALITIES
from curation.workspace import Workspace, record_event

from ..mediatools.chromaprint import backend as chromaprint_backend
from .audio import AudioSignature, audio_signature
from .clusters import Cluster, cluster_from_dict
from .image import ImageSignature, image_signature
from .leaks import Leak
from .normalize import put_gate
from .run import AuditReport, AuditSubject, Resolution, run_audit
from .tables import SIGNATURE_VERSION, MediaSignature

GATE = "audit"
RESOLVED = "audit.resolved"


def _signatures(
    ws: Workspace, wanted: set[str], log: Callable[[str], None]
) -> tuple[dict[str, ImageSignature], dict[str, AudioSignature]]:
    """Load cached signatures, compute and store the missing ones (unreadable media are logged and skipped).

    Missing ones are measured first as a batch (``curation.audit.measuring``: in worker processes when they
    are many, with the media facts, after the background step a large import started)."""
    from .measuring import measure_pending

    images: dict[str, ImageSignature] = {}
    audio: dict[str, AudioSignature] = {}
    with ws.session() as s:
        assets = {a.sha256: a for a in s.execute(select(Asset).where(col(Asset.sha256).in_(wanted))).scalars()}
    measure_pending(ws, assets.values())
    cached = _cached_signatures(ws, set(assets))
    fresh: list[MediaSignature] = []
    # a signature made without chromaprint is redone once it is there (library or fpcalc); asked once, not per clip
    fingerprints_now = chromaprint_backend() is not None
    for sha in sorted(wanted):
        asset = assets.get(sha)
        if asset is None:
            continue
        kind, data = cached.get(sha, ("", None))
        if data is None or (  # only a signature made without fpcalc can be stale: the others are not parsed twice
            fingerprints_now
            and kind == "audio"
            and data.get("chromaprint_missing")
            and AudioSignature.from_dict(data).stale()
        ):
            try:
                content = ws.asset_path(asset).read_bytes()
                make = image_signature if asset.kind == "image" else audio_signature
                signature = make(content, asset.original_name or sha[:12], ws.settings.media)
            except (MediaError, OSError) as exc:  # unreadable or missing from the store
                log(f"audit skips {asset.original_name or sha}: {exc}")
                continue
            kind, data = asset.kind, signature.to_dict()
            fresh.append(MediaSignature(sha256=sha, kind=kind, version=SIGNATURE_VERSION, data=data))
        if kind == "image":
            images[sha] = ImageSignature.from_dict(data)
        else:
            audio[sha] = AudioSignature.from_dict(data)
    if fresh:
        with ws.writing() as s:
            for row in fresh:
                s.merge(row)
    return images, audio


def _cached_signatures(ws: Workspace, wanted: set[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The stored signatures (kind, data) of the current version among ``wanted``, read as plain rows: a
    build reads every shipped medium's, and the ORM's JSON type parses each with ``json`` (orjson reads
    them in about half the time, ``facts.json_reader``)."""
    with ws.session() as s:
        rows = (
            s.connection()
            .execute(
                select(
                    col(MediaSignature.sha256), col(MediaSignature.kind), type_coerce(col(MediaSignature.data), String)
                ).where(col(MediaSignature.version) == SIGNATURE_VERSION)
            )
            .all()
        )
    rows = [row for row in rows if row[0] in wanted]
    loads = json_reader(data for _, _, data in rows if isinstance(data, str))
    return {sha: (kind, json_column(data, loads)) for sha, kind, data in rows}


def resolutions(ws: Workspace) -> list[Resolution]:
    """Maintainers' decisions, oldest first (a later decision on the same target replaces an earlier one)."""
    with ws.session() as s:
        events = s.execute(select(Event).where(col(Event.action) == RESOLVED).order_by(col(Event.id))).scalars()
        latest: dict[str, Resolution] = {}
        for event in events:
            after = event.after or {}
            target = str(after.get("target", ""))
            latest.pop(target, None)  # keep the order of the latest decisions
            latest[target] = Resolution(
                target,
                after.get("keep"),
                bool(after.get("distinct")),
                after.get("reason", ""),
                tuple(after.get("items", ())),
            )
    return list(latest.values())


def _active_items(ws: Workspace, discarded: set[str] | None = None) -> list[tuple[Item, str]]:
    """Items not discarded (``discarded``: the ids, when the caller already derived them), with their content
    hash."""
    from curation.workflow import derive_status

    if discarded is None:
        discarded = {st.id for st in derive_status(ws) if st.state == "discarded"}
    with ws.session() as s:
        rows = list(s.execute(select(Item).order_by(Item.id)).scalars())
    return [(item, item.content_hash) for item in rows if item.id not in discarded]


def run_workspace_audit(
    ws: Workspace, log: Callable[[str], None] = lambda _m: None, discarded: set[str] | None = None
) -> tuple[AuditReport, dict[str, str]]:
    """Every audit over the workspace's live items, stored nowhere: the report and each item's content hash.

    What the release build's audit gate reads (a build reads gates, it never writes gate rows); only the
    per-asset signature cache is filled in. ``discarded``: the discarded items, when the caller derived them.
    """
    active = _active_items(ws, discarded)
    wanted = {sha for item, _ in active for sha in (item.image, item.audio) if sha}
    images, audio = _signatures(ws, wanted, log)
    subjects = [
        AuditSubject(
            item.id,
            item.group_id,
            item.context,
            dict(item.options),
            item.answer,
            item.image,
            item.audio,
            item.language,
            tuple(item.modalities) if item.modalities else MODALITIES,
            item_notes(item.extra) if item.kind == "mcq" else {},
            tuple(sorted(set((item.taxonomy or {}).values()))),
        )
        for item, _ in active
    ]
    gates = ws.settings.gates
    return run_audit(subjects, images, audio, gates.option_in_context, gates.note_option), {
        item.id: digest for item, digest in active
    }


def audit_workspace(ws: Workspace, actor: str = "cli", log: Callable[[str], None] = lambda _m: None) -> AuditReport:
    """Run every audit over the workspace's items and store each item's audit gate (``curate audit``)."""
    report, digests = run_workspace_audit(ws, log)
    decided = resolutions(ws)
    with ws.writing() as s:
        _store_gates(s, report, digests, decided)
        record_event(
            s,
            actor,
            "audit.run",
            "audit",
            None,
            {"items": len(digests), "clusters": len(report.clusters), "leaks": len(report.leaks)},
        )
    return report


def _store_gates(s, report: AuditReport, digests: dict[str, str], decided: list[Resolution]) -> None:  # type: ignore[no-untyped-def]
    reasons = report.gate_reasons(decided)
    for item_id, digest in digests.items():
        details: dict[str, Any] = {
            "clusters": [c.to_dict() for c in report.clusters if item_id in c.items],
            "leaks": [leak.to_dict() for leak in report.leaks if item_id in leak.items],
        }
        put_gate(s, item_id, GATE, digest, reasons.get(item_id, []), details)


def stored_report(ws: Workspace) -> tuple[AuditReport, dict[str, str]]:
    """The latest audit as stored in the items' gate results, and the content hash each was judged on."""
    clusters: dict[str, Cluster] = {}
    leaks: dict[str, Leak] = {}
    digests: dict[str, str] = {}
    with ws.session() as s:
        for row in s.execute(select(GateResult).where(col(GateResult.gate) == GATE)).scalars():
            digests[row.item_id] = row.content_hash
            for data in (row.details or {}).get("clusters", []):
                clusters.setdefault(data["id"], cluster_from_dict(data))
            for data in (row.details or {}).get("leaks", []):
                leak = Leak(data["kind"], list(data["items"]), dict(data["evidence"]))
                leaks.setdefault(leak.id, leak)
        groups = dict(s.execute(select(col(Item.id), col(Item.group_id))).all())
    report = AuditReport(
        sorted(clusters.values(), key=lambda c: c.items),
        sorted(leaks.values(), key=lambda k: (k.kind, k.items)),
        groups,
    )
    return report, digests


def resolve(
    ws: Workspace, target: str, by: str, keep: str | None = None, distinct: bool = False, reason: str = ""
) -> Resolution:
    """A maintainer keeps one item of a cluster (or leak) or declares its members distinct; an event per item."""
    ws.require_role(by, "maintainer")
    if (keep is None) == (not distinct):
        raise ValidationFailed([Problem("give exactly one of --keep ITEM or --distinct", field="resolution")])
    if distinct and not reason.strip():
        raise ValidationFailed([Problem("--distinct needs a --reason (kept in the event log)", field="reason")])
    report, digests = stored_report(ws)
    found = report.find(target)
    if found is None:
        raise NotFoundError(f"no cluster or leak {target!r} in the latest audit; run `curate audit` to list them")
    if keep is not None and keep not in found.items:
        raise ValidationFailed([Problem(f"{keep!r} is not in {target} ({', '.join(found.items)})", field="keep")])
    decision = Resolution(target, keep, distinct, reason.strip(), tuple(found.items))
    decided = [r for r in resolutions(ws) if r.target != target] + [decision]
    with ws.writing() as s:
        for item_id in found.items:
            after = {
                "target": target,
                "keep": keep,
                "distinct": distinct,
                "reason": decision.reason,
                "items": list(found.items),
            }
            record_event(s, by, RESOLVED, f"item:{item_id}", None, after)
        _store_gates(s, report, digests, decided)
    return decision
