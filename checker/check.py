"""``curate check`` on a workspace: items in, verdicts, summary and the probe gate out."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import select

from curation.derived import load_derived
from curation.errors import NotFoundError
from curation.tables import Asset, GateResult, Item, utcnow
from curation.transcripts import transcripts_of
from curation.vocab import MODALITIES

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

    Models without audio read the clip's stored speech-to-text transcript (``curate transcribe``, the latest
    one), else the author's (``provenance.audio.transcript``); ``audio_transcript_source`` says which.
    """
    with ws.session() as s:
        query = select(Item).order_by(Item.id)
        if ids:
            query = query.where(Item.id.in_(list(ids)))  # type: ignore[attr-defined]
        rows = list(s.execute(query).scalars())
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
        stored = transcripts_of(s, [r.audio for r in rows if r.audio])
    if ids:
        missing = sorted(set(ids) - {r.id for r in rows})
        if missing:
            raise NotFoundError(f"no item named {', '.join(missing)} in this workspace")
    items = []
    for row in rows:
        image = assets[row.image] if row.image else None
        audio = assets[row.audio] if row.audio else None
        authored = (row.provenance or {}).get("audio", {}).get("transcript")
        transcript, source = (authored, "author") if isinstance(authored, str) and authored.strip() else (None, None)
        if row.audio in stored and stored[row.audio].text:
            transcript, source = stored[row.audio].text, stored[row.audio].model
        items.append(
            ProbeItem(
                id=row.id,
                content_hash=row.content_hash,
                context=row.context,
                question=row.question,
                options=dict(row.options),
                answer=row.answer,
                image=ws.asset_path(image) if image else None,
                audio=ws.asset_path(audio) if audio else None,
                image_sha=image.sha256 if image else "",
                audio_sha=audio.sha256 if audio else "",
                audio_transcript=transcript,
                audio_transcript_source=source,
                audio_seconds=audio.duration_s if audio else None,
                modalities=tuple(row.modalities) if row.modalities else MODALITIES,
            )
        )
    return items


def transcript_sources(items: Sequence[ProbeItem]) -> dict[str, str]:
    """Per item read through a transcript, who wrote it (a model's id or ``author``): the run's G.6 record."""
    return {item.id: item.audio_transcript_source for item in items if item.audio_transcript_source}


def human_checklist_sets(ws) -> dict[str, dict[str, list[str]]]:  # type: ignore[no-untyped-def]
    """Per item with a full subset-checklist quorum, the reviewers' sets combined by the configured rule."""
    state = load_derived(ws)
    out: dict[str, dict[str, list[str]]] = {}
    for item_id in state.facts:
        if "subset_checklist" not in state.kind(item_id).stage_names:
            continue
        combined = state.checklist(item_id)
        if combined is not None:
            out[item_id] = combined
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
    for probe in probes.values():  # every probe's file is checked before the first one runs
        probe.check_items(items)
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
            **({} if probe.audio_input else {"transcripts": transcript_sources(items)}),
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
