"""Normalization inside a workspace, and the media gate it feeds.

Originals stay in the store untouched; each normalized form is an Asset row of its own with
``derived_from`` and the transform's parameters, mapped from its original in ``asset_derivative``.
Items keep pointing at their originals, so a derivative is not a revision and invalidates no review.
Normalizing again changes nothing: an original with a current derivative is skipped, and the tools
themselves return a normalized file unchanged.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from curation.config import MediaSettings
from curation.errors import MediaError
from curation.mediatools import (
    MediaCheck,
    NormalizedMedia,
    check_audio,
    check_image,
    normalize_audio,
    normalize_image,
    probe_audio,
    recording_problems,
)
from curation.tables import Asset, GateResult, Item, utcnow
from curation.workspace import Workspace, record_event

from .tables import AssetDerivative

GATE = "media"
PURPOSE = "normalized"


def settings_key(settings: MediaSettings) -> str:
    """Derivatives made under other media settings are stale and made again."""
    return hashlib.sha256(json.dumps(settings.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()


@dataclass
class AssetReport:
    asset: str
    kind: str
    name: str
    items: list[str]
    normalized: str | None
    """The normalized derivative's hash; None when the original itself conforms or cannot be normalized."""
    created: bool
    reasons: list[str] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "asset": self.asset,
            "kind": self.kind,
            "name": self.name,
            "items": self.items,
            "normalized": self.normalized,
            "created": self.created,
            "reasons": self.reasons,
            "details": self.details,
        }


@dataclass
class NormalizeReport:
    assets: list[AssetReport] = field(default_factory=list)

    @property
    def nonconforming(self) -> list[AssetReport]:
        return [a for a in self.assets if a.reasons]

    def summary(self) -> dict[str, int]:
        return {
            "assets": len(self.assets),
            "created": sum(a.created for a in self.assets),
            "nonconforming": len(self.nonconforming),
        }


def _usage(session) -> tuple[dict[str, list[str]], dict[str, tuple[dict[str, str], str]]]:  # type: ignore[no-untyped-def]
    """Asset -> items using it; item -> (its media by modality, content hash). An item without a modality
    (an ``mcq`` item over {text, image} has no audio) has no entry for it."""
    usage: dict[str, list[str]] = {}
    items: dict[str, tuple[dict[str, str], str]] = {}
    for item_id, image, audio, digest in session.execute(
        select(col(Item.id), col(Item.image), col(Item.audio), col(Item.content_hash)).order_by(col(Item.id))
    ):
        media = {modality: sha for modality, sha in (("image", image), ("audio", audio)) if sha}
        items[item_id] = (media, digest)
        for sha in media.values():
            usage.setdefault(sha, []).append(item_id)
    return usage, items


def _derivative_asset(original: Asset, result: NormalizedMedia, sha: str) -> Asset:
    import soundfile as sf

    asset = Asset(
        sha256=sha,
        kind=original.kind,
        mime=result.mime,
        ext=f".{result.ext}",
        size_bytes=len(result.data),
        original_name=f"{original.original_name} (normalized)",
        provenance=original.provenance,
        derived_from=original.sha256,
        transform=result.params,
    )
    if original.kind == "image":
        asset.width, asset.height = result.params["width"], result.params["height"]
    else:
        info = sf.info(io.BytesIO(result.data))
        asset.duration_s = round(info.frames / info.samplerate, 4)
        asset.sample_rate, asset.channels = info.samplerate, info.channels
    return asset


def _merge(*checks: MediaCheck) -> tuple[list[str], dict[str, str]]:
    details: dict[str, str] = {}
    for check in checks:
        for code, detail in check.details.items():
            details.setdefault(code, detail)
    return sorted(details), details


def normalize_workspace(
    ws: Workspace, check_only: bool = False, actor: str = "cli", log: Callable[[str], None] = lambda _m: None
) -> NormalizeReport:
    """Normalize every medium items use (unless ``check_only``), then store each item's media gate."""
    settings = ws.settings.media
    key = settings_key(settings)
    with ws.session() as s:
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
        mapping = {
            m.original: m
            for m in s.execute(select(AssetDerivative).where(col(AssetDerivative.purpose) == PURPOSE)).scalars()
        }
        usage, items = _usage(s)
    report = NormalizeReport()
    new_assets: dict[str, tuple[Asset, bytes]] = {}
    new_mappings: list[AssetDerivative] = []
    for sha in sorted(usage):
        original = assets[sha]
        data = ws.asset_path(original).read_bytes()
        name = original.original_name or sha[:12]
        current = mapping.get(sha)
        derivative = current.derivative if current and current.settings_key == key else None
        created = False
        if derivative is None and not check_only:
            normalize = normalize_image if original.kind == "image" else normalize_audio
            try:
                result = normalize(data, name, settings)
            except MediaError as exc:
                log(f"cannot normalize {name}: {exc}")
            else:
                if result.data != data:
                    derivative = hashlib.sha256(result.data).hexdigest()
                    if derivative not in assets and derivative not in new_assets:
                        new_assets[derivative] = (_derivative_asset(original, result, derivative), result.data)
                    new_mappings.append(
                        AssetDerivative(original=sha, purpose=PURPOSE, derivative=derivative, settings_key=key)
                    )
                    created = True
        effective = (
            new_assets[derivative][1]
            if derivative in new_assets
            else (ws.asset_path(assets[derivative]).read_bytes() if derivative else data)
        )
        check = check_image if original.kind == "image" else check_audio
        checks = [check(effective, name, settings)]
        if original.kind == "audio":
            checks.append(recording_problems(data, name, settings))
        reasons, details = _merge(*checks)
        report.assets.append(AssetReport(sha, original.kind, name, usage[sha], derivative, created, reasons, details))
    _store(ws, report, items, new_assets, new_mappings, actor)
    return report


def _store(  # type: ignore[no-untyped-def]
    ws: Workspace, report: NormalizeReport, items, new_assets, new_mappings, actor: str
) -> None:
    by_asset = {a.asset: a for a in report.assets}
    staging = ws.media.stage()
    try:
        with ws.writing() as s:
            for sha, (asset, data) in new_assets.items():
                staging.add_bytes(data, sha, asset.ext)
                if s.get(Asset, sha) is None:  # a concurrent normalize may have stored it since we read
                    s.add(asset)
            s.flush()
            for mapping in new_mappings:
                existing = s.get(AssetDerivative, (mapping.original, mapping.purpose))
                if existing is not None:
                    existing.derivative, existing.settings_key = mapping.derivative, mapping.settings_key
                    existing.created_at = utcnow()
                    s.add(existing)
                else:
                    s.add(mapping)
                record_event(
                    s, actor, "media.normalized", f"asset:{mapping.original}", None, {"derivative": mapping.derivative}
                )
            for item_id, (media, digest) in items.items():
                reasons = sorted({r for sha in media.values() for r in by_asset[sha].reasons})
                details = {modality: by_asset[sha].details for modality, sha in media.items()}
                put_gate(s, item_id, GATE, digest, reasons, details)
        staging.commit()
    except BaseException:
        staging.discard()
        raise


def put_gate(s, item_id: str, gate: str, digest: str, reasons: list[str], details: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    row = s.get(GateResult, (item_id, gate))
    if row is None:
        row = GateResult(item_id=item_id, gate=gate, content_hash=digest, reasons=reasons)
    row.content_hash, row.reasons, row.blocking, row.details = digest, reasons, bool(reasons), details
    row.updated_at = utcnow()
    s.add(row)


def normalized_asset(ws: Workspace, original: str) -> str:
    """The hash of the asset to ship for ``original``: its current normalized form, else itself."""
    with ws.session() as s:
        mapping = s.get(AssetDerivative, (original, PURPOSE))
    if mapping is not None and mapping.settings_key == settings_key(ws.settings.media):
        return mapping.derivative
    return original


def probe_input(ws: Workspace, audio: str, sample_rate: int = 16000):  # type: ignore[no-untyped-def]
    """Model-input derivative on demand: mono float32 audio at ``sample_rate`` from the shipped form."""
    with ws.session() as s:
        asset = s.get(Asset, normalized_asset(ws, audio))
    if asset is None:
        raise MediaError(f"no audio asset {audio}")
    return probe_audio(ws.asset_path(asset).read_bytes(), asset.original_name, ws.settings.media, sample_rate)
