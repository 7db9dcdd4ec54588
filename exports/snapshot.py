"""What a release contains, read from the workspace in one pass: item records, media, review summaries.

Everything here is plain data in a fixed order, so that the writers downstream are deterministic.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from sqlalchemy import select

from curation.tables import Asset, Decision, GateResult, Item, SceneGroup
from curation.vocab import AUDIO_AXES, OPTION_KEYS
from curation.workflow import Derivation, combine_checklist, group_inputs, load_facts, load_records
from curation.workspace import Workspace

from .gates import load_assets, release_asset

ITEM_COLUMNS = (
    "id",
    "group",
    "perturbed",
    "language",
    "context",
    "question",
    "options",
    "answer",
    "taxonomy_text",
    "taxonomy_image",
    "taxonomy_audio",
    "ambiguous",
    "tier",
    "image",
    "audio",
    "image_sha256",
    "audio_sha256",
    "image_source",
    "image_license",
    "audio_source",
    "audio_license",
    "revision",
)
"""The release's item record: one row of data/items.parquet and one line of data/items.jsonl."""


@dataclass(frozen=True)
class MediaFile:
    """A medium as shipped: ``media/<sha256><ext>``, copied from the store."""

    asset: Asset
    original: Asset
    items: tuple[str, ...]

    @property
    def path(self) -> str:
        return f"media/{self.asset.sha256}{self.asset.ext}"


@dataclass
class Snapshot:
    items: list[dict[str, Any]]
    media: list[MediaFile]
    admission: list[dict[str, Any]]


def media_name(asset: Asset) -> str:
    return f"media/{asset.sha256}{asset.ext}"


def take_snapshot(ws: Workspace, item_ids: Iterable[str]) -> Snapshot:
    """The records of the given items (sorted by id), their media and their admission summaries."""
    wanted = sorted(set(item_ids))
    assets, derivatives = load_assets(ws)
    with ws.session() as s:
        rows = {i.id: i for i in s.execute(select(Item).where(Item.id.in_(wanted))).scalars()}
        perturbed = dict(s.execute(select(SceneGroup.id, SceneGroup.perturbed)).all())
        facts, facts_perturbed = load_facts(s)
        records = load_records(s)
        decisions = list(s.execute(select(Decision)).scalars())
        gates = list(s.execute(select(GateResult).where(GateResult.item_id.in_(wanted))).scalars())
    derivation = Derivation(ws.settings.review, facts, facts_perturbed, records, decisions)
    facts_by_id = {f.id: f for f in facts}
    sisters: dict[str, list[Any]] = defaultdict(list)
    for f in facts:
        if f.id not in derivation.discarded:
            sisters[f.group].append(f)

    items: list[dict[str, Any]] = []
    users: dict[str, list[str]] = defaultdict(list)
    for item_id in wanted:
        row = rows[item_id]
        image = release_asset(assets, derivatives, row.image)
        audio = release_asset(assets, derivatives, row.audio)
        users[image.sha256].append(item_id)
        users[audio.sha256].append(item_id)
        provenance = row.provenance or {}
        items.append(
            {
                "id": row.id,
                "group": row.group_id,
                "perturbed": perturbed[row.group_id],
                "language": row.language,
                "context": row.context,
                "question": row.question,
                "options": [row.options[k] for k in OPTION_KEYS[: len(row.options)]],
                "answer": row.answer,
                "taxonomy_text": row.taxonomy["text"],
                "taxonomy_image": row.taxonomy["image"],
                "taxonomy_audio": row.taxonomy["audio"],
                "ambiguous": list(row.ambiguous),
                "tier": len(row.ambiguous),
                "image": media_name(image),
                "audio": media_name(audio),
                "image_sha256": image.sha256,
                "audio_sha256": audio.sha256,
                "image_source": provenance.get("image", {}).get("source", ""),
                "image_license": provenance.get("image", {}).get("license", ""),
                "audio_source": provenance.get("audio", {}).get("source", ""),
                "audio_license": provenance.get("audio", {}).get("license", ""),
                "revision": row.revision,
            }
        )
    media = [
        MediaFile(assets[sha], assets[assets[sha].derived_from or sha], tuple(ids))
        for sha, ids in sorted(users.items())
    ]
    admission = [
        admission_summary(derivation, facts_by_id[item_id], sisters[rows[item_id].group_id], gates, ws)
        for item_id in wanted
    ]
    return Snapshot(items, media, admission)


def admission_summary(
    derivation: Derivation,
    item: Any,
    sisters: list[Any],
    gates: list[GateResult],
    ws: Workspace,
) -> dict[str, Any]:
    """How an item got in: review counts and outcomes per stage (no reviewer names), overrides, gates, probe."""
    stages: dict[str, Any] = {}
    grammar = derivation.valid_records(item, "grammar")
    stages["grammar"] = _verdicts(r.payload.get("verdict") for r in grammar)
    audio = derivation.valid_records(item, "audio_signoff")
    stages["audio_signoff"] = {
        "reviews": len(audio),
        "mean_scores": {
            axis: round(fmean(r.payload["scores"][axis] for r in audio), 4) if audio else None for axis in AUDIO_AXES
        },
    }
    checklist = derivation.valid_records(item, "subset_checklist")
    rule = ws.settings.review.combine
    combined = combine_checklist([r.payload["consistent"] for r in checklist], rule) if checklist else {}
    stages["subset_checklist"] = {
        "reviews": len(checklist),
        "combine": rule,
        "consistent": {view: sorted(keys) for view, keys in combined.items()},
        "unanimous_views": sum(
            1
            for view in combined
            if len({tuple(sorted(r.payload["consistent"].get(view, []))) for r in checklist}) == 1
        ),
    }
    answers = derivation.valid_records(item, "answer_check")
    stages["answer_check"] = {
        "reviews": len(answers),
        "agreeing": sum(r.payload.get("answer") == item.answer for r in answers),
    }
    group_inputs_now = group_inputs(derivation.perturbed[item.group], sisters)
    authors = {s.author for s in sisters}
    latest: dict[str, Any] = {}
    for rec in sorted(
        derivation.by_subject.get(f"group:{item.group}", {}).get("group_integration", []), key=lambda r: r.id
    ):
        if rec.inputs_hash == group_inputs_now and rec.reviewer not in authors:
            latest[rec.reviewer] = rec
    stages["group_integration"] = _verdicts(r.payload.get("verdict") for r in latest.values())
    overrides = {
        stage: verdict for (item_id, stage), verdict in sorted(derivation.overrides.items()) if item_id == item.id
    }
    current = [g for g in gates if g.item_id == item.id and g.content_hash == item.content_hash]
    gate_rows = [
        {"gate": g.gate, "reasons": list(g.reasons), "blocking": g.blocking}
        for g in sorted(current, key=lambda g: g.gate)
    ]
    probe = next((g.details for g in current if g.gate == "probe"), None)
    return {
        "id": item.id,
        "revision": item.revision,
        "stages": stages,
        "annotations": sum(v["reviews"] for v in stages.values()),
        "overrides": overrides,
        "gates": gate_rows,
        "probe": probe,
    }


def _verdicts(verdicts: Iterable[Any]) -> dict[str, Any]:
    counts = Counter(str(v) for v in verdicts)
    return {"reviews": sum(counts.values()), "verdicts": dict(sorted(counts.items()))}
