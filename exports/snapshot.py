"""What a release contains, read from the workspace in one pass: item records, media, review summaries.

Everything here is plain data in a fixed order, so that the writers downstream are deterministic.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from curation.derived import DerivedState
from curation.errors import CurateError
from curation.kinds import kind_of
from curation.kinds.mcq import ITEM_COLUMNS
from curation.notes import item_notes, note_columns
from curation.tables import Asset, Item
from curation.vocab import MODALITIES, OPTION_KEYS
from curation.workspace import Workspace

from .build_state import derived
from .gates import load_assets, release_asset

__all__ = [
    "ITEM_COLUMNS",
    "MediaFile",
    "Snapshot",
    "admission_summary",
    "media_name",
    "shipped_media",
    "take_snapshot",
]


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
    columns: tuple[str, ...] = ITEM_COLUMNS
    """The item record's columns: the kind's release layout for the released items' modalities."""


def media_name(asset: Asset) -> str:
    return f"media/{asset.sha256}{asset.ext}"


def take_snapshot(ws: Workspace, item_ids: Iterable[str]) -> Snapshot:
    """The records of the given items (sorted by id), their media and their admission summaries."""
    wanted = sorted(set(item_ids))
    assets, derivatives = load_assets(ws)
    with ws.session() as s:
        rows = {i.id: i for i in s.execute(select(Item).where(Item.id.in_(wanted))).scalars()}
    state = derived(ws)
    modalities = sorted({m for item_id in wanted for m in state.facts[item_id].modalities})
    kinds = sorted({state.facts[item_id].kind for item_id in wanted}) or ["mcq"]
    if len(kinds) > 1:
        raise CurateError(f"a release holds items of one kind; these items are of the kinds {', '.join(kinds)}")
    layout = kind_of(kinds[0]).release
    if layout is None:
        raise CurateError(f"kind {kinds[0]!r} declares no release layout")
    columns = layout.columns(modalities)

    items: list[dict[str, Any]] = []
    for item_id in wanted:
        row = rows[item_id]
        has = state.facts[item_id].modalities
        provenance = row.provenance or {}
        record: dict[str, Any] = {
            "id": row.id,
            "group": row.group_id,
            "perturbed": state.perturbed[row.group_id],
            "language": row.language,
            "context": row.context if "text" in has else None,
            "question": row.question,
            "options": [row.options[k] for k in OPTION_KEYS[: len(row.options)]],
            "answer": row.answer,
            "ambiguous": list(row.ambiguous),
            "tier": len(row.ambiguous),
            "revision": row.revision,
        }
        for modality in MODALITIES:
            record[f"taxonomy_{modality}"] = (row.taxonomy or {}).get(modality)
        for modality in ("image", "audio"):
            sha = getattr(row, modality)
            if modality not in has or not sha:
                continue
            asset = release_asset(assets, derivatives, sha)
            record[modality] = media_name(asset)
            record[f"{modality}_sha256"] = asset.sha256
            record[f"{modality}_source"] = provenance.get(modality, {}).get("source", "")
            record[f"{modality}_license"] = provenance.get(modality, {}).get("license", "")
        record.update(note_columns(item_notes(row.extra) if row.kind == "mcq" else {}, has))
        items.append({column: record.get(column) for column in columns})
    admission = [admission_summary(state, item_id) for item_id in wanted]
    return Snapshot(items, _media_files(state, assets, derivatives, wanted), admission, columns)


def shipped_media(ws: Workspace, item_ids: Iterable[str]) -> list[MediaFile]:
    """The media a release of the given items ships, by name, each with the items that use it: the snapshot's
    list, which the prefetch starts copying before the snapshot is taken."""
    assets, derivatives = load_assets(ws)
    return _media_files(derived(ws), assets, derivatives, item_ids)


def _media_files(
    state: DerivedState, assets: dict[str, Asset], derivatives: dict[str, Asset], item_ids: Iterable[str]
) -> list[MediaFile]:
    users: dict[str, list[str]] = defaultdict(list)
    for item_id in sorted(set(item_ids)):
        facts = state.facts[item_id]
        for modality in ("image", "audio"):
            sha = getattr(facts, modality)
            if modality in facts.modalities and sha:
                users[release_asset(assets, derivatives, sha).sha256].append(item_id)
    return [
        MediaFile(assets[sha], assets[assets[sha].derived_from or sha], tuple(ids))
        for sha, ids in sorted(users.items())
    ]


def admission_summary(state: DerivedState, item_id: str) -> dict[str, Any]:
    """How an item got in: per stage of its kind, review counts and outcomes (no reviewer names), overrides,
    gates, probe."""
    item = state.facts[item_id]
    stages = state.stage_summaries(item_id)
    current = state.gates(item_id)
    gate_rows = [{"gate": g.gate, "reasons": list(g.reasons), "blocking": g.blocking} for g in current]
    probe = next((g.details for g in current if g.gate == "probe"), None)
    return {
        "id": item.id,
        "revision": item.revision,
        "stages": stages,
        "annotations": sum(v["reviews"] for v in stages.values()),
        "overrides": state.overrides(item_id),
        "gates": gate_rows,
        "probe": probe,
    }
