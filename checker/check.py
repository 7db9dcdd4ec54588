"""``curate check`` on a workspace: items in, verdicts, summary and the probe gate out."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import select

from curation.errors import NotFoundError
from curation.tables import Asset, GateResult, Item, utcnow
from curation.workflow import Derivation, combine_checklist, load_facts, load_records

from .backends.base import ProbeBackend
from .cache import ProbeCache
from .estimators import EstimatorConfig
from .prompts import AnswerFormat
from .run import RunStats, run_check
from .verdicts import ItemResult, summarize, union_results
from .views import ProbeItem

PROBE_GATE = "probe"


def load_probe_items(ws, ids: Sequence[str] | None = None) -> list[ProbeItem]:  # type: ignore[no-untyped-def]
    """The workspace's items (all, or ``ids``) with their media paths in the store, in id order.

    An author-given transcript (``provenance.audio.transcript``) is what models without audio read.
    """
    with ws.session() as s:
        query = select(Item).order_by(Item.id)
        if ids:
            query = query.where(Item.id.in_(list(ids)))  # type: ignore[attr-defined]
        rows = list(s.execute(query).scalars())
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
    if ids:
        missing = sorted(set(ids) - {r.id for r in rows})
        if missing:
            raise NotFoundError(f"no item named {', '.join(missing)} in this workspace")
    items = []
    for row in rows:
        image, audio = assets[row.image], assets[row.audio]
        transcript = (row.provenance or {}).get("audio", {}).get("transcript")
        items.append(
            ProbeItem(
                id=row.id,
                content_hash=row.content_hash,
                context=row.context,
                question=row.question,
                options=dict(row.options),
                answer=row.answer,
                image=ws.asset_path(image),
                audio=ws.asset_path(audio),
                image_sha=image.sha256,
                audio_sha=audio.sha256,
                audio_transcript=transcript if isinstance(transcript, str) and transcript.strip() else None,
                audio_seconds=audio.duration_s,
            )
        )
    return items


def human_checklist_sets(ws) -> dict[str, dict[str, list[str]]]:  # type: ignore[no-untyped-def]
    """Per item with a full subset-checklist quorum, the reviewers' sets combined by the configured rule."""
    with ws.session() as s:
        facts, perturbed = load_facts(s)
        records = load_records(s)
    settings = ws.settings.review
    derivation = Derivation(settings, facts, perturbed, records)
    out: dict[str, dict[str, list[str]]] = {}
    for item in facts:
        valid = derivation.valid_records(item, "subset_checklist")
        if len(valid) >= settings.subset_checklist_quorum:
            combined = combine_checklist([r.payload["consistent"] for r in valid], settings.combine)
            out[item.id] = {view: sorted(keys) for view, keys in combined.items()}
    return out


def record_probe_gate(
    ws,
    items: Sequence[ProbeItem],
    results: Sequence[ItemResult],
    details: Mapping[str, Any],  # type: ignore[no-untyped-def]
) -> None:
    """Store each item's latest probe verdict as its ``probe`` gate result, tied to the item's content.

    The result is stored whatever ``[gates] probe`` says, so status views and the dashboard can show it;
    it blocks admission (``held``) only when the gate is ``block``. A well-posed item gets no reason.
    """
    mode = ws.settings.gates.probe
    by_id = {item.id: item for item in items}
    with ws.writing() as s:
        for result in results:
            row = s.get(GateResult, (result.item, PROBE_GATE))
            if row is None:
                row = GateResult(item_id=result.item, gate=PROBE_GATE, content_hash="", reasons=[])
            row.content_hash = by_id[result.item].content_hash
            row.reasons = [] if result.verdict == "well_posed" else [f"probe:{result.verdict}"]
            row.blocking = mode == "block"
            row.details = {**details, "gate_mode": mode, "result": result.to_json()}
            row.updated_at = utcnow()
            s.add(row)


def probe_reasons(ws) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Per item, the ``probe:<verdict>`` reasons of its latest stored probe result, if still current.

    A result stored for an earlier content of the item is stale and gives no reason. Whether a reason
    blocks is the gate's setting (``ws.settings.gates.probe``), applied by the caller.
    """
    with ws.session() as s:
        current = dict(s.execute(select(Item.id, Item.content_hash)).all())
        rows = s.execute(
            select(GateResult.item_id, GateResult.content_hash, GateResult.reasons).where(GateResult.gate == PROBE_GATE)
        ).all()
    return {item: list(reasons) for item, digest, reasons in rows if current.get(item) == digest and reasons}


def check_workspace(
    ws,  # type: ignore[no-untyped-def]
    backend: ProbeBackend | Mapping[str, ProbeBackend],
    config: EstimatorConfig,
    *,
    ids: Sequence[str] | None = None,
    answer_format: AnswerFormat = "letter",
    on_start: Callable[[int], None] | None = None,
    on_item_done: Callable[[int], None] | None = None,
) -> tuple[dict[str, Any], RunStats, list[str], list[ItemResult]]:
    """Probe the workspace's items, store the gate results; the ``check`` document, stats, skipped ids, results.

    ``backend`` is one probe, or several by name (their specs): each probes every item through its own
    cache entries, and an item's set per view is the union of theirs, as the reference checker forms it
    (TRIAD App. D.2). Items a probe does not cover (a replay file of other items) are skipped and listed.
    """
    probes = dict(backend) if isinstance(backend, Mapping) else {backend.kind: backend}
    all_items = load_probe_items(ws, ids)
    items = [item for item in all_items if all(b.covers(item.id) for b in probes.values())]
    skipped = [item.id for item in all_items if not all(b.covers(item.id) for b in probes.values())]
    if on_start:
        on_start(len(items) * len(probes))
    cache = ProbeCache(ws.engine)
    per_probe: dict[str, list[ItemResult]] = {}
    runs: dict[str, dict[str, Any]] = {}
    total = RunStats(items=len(items))
    for name, probe in probes.items():
        results, stats = run_check(items, probe, config, cache, answer_format=answer_format, on_item_done=on_item_done)
        per_probe[name] = results
        runs[name] = {
            "backend": probe.kind,
            "model": probe.model_id,
            "estimator": config.as_dict(),
            "audio_input": "native" if probe.audio_input else "transcript_or_description",
            **stats.as_json(),
            "skipped": skipped,
        }
        total.add(stats)
    results = union_results(per_probe)
    document: dict[str, Any] = {
        "items": [r.to_json() for r in results],
        "summary": summarize(results, human_checklist_sets(ws)),
    }
    if len(probes) == 1:
        document["run"] = next(iter(runs.values()))
    else:
        document["summary"]["by_probe"] = {name: summarize(results)["verdicts"] for name, results in per_probe.items()}
        document["run"] = {"probes": runs, "combine": "union", **total.as_json(), "skipped": skipped}
    details = (
        {"backend": next(iter(probes.values())).kind, "model": next(iter(probes.values())).model_id}
        if len(probes) == 1
        else {"probes": {name: {"backend": p.kind, "model": p.model_id} for name, p in probes.items()}}
    )
    record_probe_gate(ws, items, results, {**details, "estimator": config.name})
    return document, total, skipped, results
