"""`curate release build`: gate the admitted items, write a deterministic release folder, publish it once.

The folder is written under a hidden temporary name beside its destination and renamed into place, so an
interrupted build leaves nothing behind (a killed build's leftovers are removed by the next build). Publishing
(``exports.publish``) claims the version once: any later build of it must reproduce the manifest byte for byte.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.audio_production.claims import consent_summary
from curation.bulk import collector_paused
from curation.derived import load_derived
from curation.errors import CheckFailed, Problem, ValidationFailed
from curation.release_claims import ReleaseClaims, load_claims
from curation.workflow import StatusInputs
from curation.workspace import Workspace

from .admission_record import write_admission_record
from .baseline import write_baseline
from .build_state import pinned
from .card import ITEM_FEATURES, CardFacts, croissant, dataset_card
from .claims import consent_sentences, intake_facts, released_authors, write_claims
from .fingerprints import SKETCH_SPEC, minhash_hex, text_sha256
from .gates import Gates, default_gates, run_item_gates, run_reports, run_workspace_gates
from .leaf_agreement import write_leaf_agreement
from .prefetch import MediaPrefetch
from .publish import (
    BuildResult,
    GatesFailed,
    _check_target,
    _publish,
    _published_name,
    reconcile_releases,
    refuse_changed_data,
    release_date,
)
from .recording_controls import write_recording_controls
from .release_parquet import parquet_bytes
from .snapshot import ITEM_COLUMNS, Snapshot, take_snapshot
from .stats import release_stats
from .tables import Release
from .writer import ReleaseWriter, StoreChecks, canonical_json, jsonl_bytes

FORMAT = "omnicurate-release/1"
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\Z"
)
MAX_VERSION_CHARS = 100
"""The release table's limit; semantic versions in practice are far shorter."""
DEFAULT_LICENSE = "CC-BY-4.0"


def validate_version(version: str) -> str:
    """The whole string must be a semantic version of at most MAX_VERSION_CHARS characters."""
    if len(version) > MAX_VERSION_CHARS:
        raise ValidationFailed(
            [Problem(f"a version of {len(version)} characters; the limit is {MAX_VERSION_CHARS}", "version")]
        )
    if not SEMVER.fullmatch(version):
        raise ValidationFailed(
            [Problem(f"{version!r} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 0.1.0 or 1.0.0-rc.1)", "version")]
        )
    return version


def version_key(version: str) -> tuple[Any, ...]:
    """Semantic-version precedence (pre-releases sort before their release)."""
    match = SEMVER.match(version)
    if not match:
        return (float("inf"), version)
    major, minor, patch, pre, _ = match.groups()
    pre_key: tuple[Any, ...] = (
        (1,) if pre is None else (0, *((0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")))
    )
    return (int(major), int(minor), int(patch), pre_key)


def _parquet_bytes(jsonl: bytes, columns: tuple[str, ...] = ITEM_COLUMNS) -> bytes:
    """data/items.parquet from the JSONL bytes, so both hold the same records, typed as the card declares them
    (``ITEM_FEATURES``; ``image`` and ``audio`` as ``datasets`` media features: ``exports.release_parquet``)."""
    types = {name: dtype for name, dtype, _ in ITEM_FEATURES}
    return parquet_bytes(jsonl, [(c, types.get(c, "string")) for c in columns], "data/items.parquet")


def _duplicates(reports: dict[str, Any], released: set[str]) -> tuple[dict[str, Any], str]:
    """Duplicate clusters and their resolutions, from the audit's ``duplicates`` report hook when wired."""
    found = reports.get("duplicates")
    if found is None:
        note = "no duplicate audit is wired into release builds in this installation; the cluster list is empty."
        return {"clusters": [], "note": note}, note
    clusters = [c for c in found.get("clusters", []) if released & set(c.get("items", []))]
    note = f"{len(clusters)} duplicate cluster(s) recorded, each with its resolution (duplicates.json)."
    return {"clusters": clusters, "note": note}, note


def _media_facts(snapshot: Snapshot) -> list[dict[str, Any]]:
    """attributions.json: per shipped file, its origin, licence, attribution and transform."""
    facts = []
    for m in snapshot.media:
        provenance = dict(m.original.provenance or m.asset.provenance or {})
        facts.append(
            {
                "file": m.path,
                "sha256": m.asset.sha256,
                "kind": m.asset.kind,
                "mime": m.asset.mime,
                "items": list(m.items),
                "source": provenance.pop("source", ""),
                "license": provenance.pop("license", ""),
                "provenance": provenance,
                "derived_from": m.asset.derived_from,
                "transform": m.asset.transform,
                "original_name": m.original.original_name,
            }
        )
    return facts


def _manifest_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    records = []
    for item in items:
        context = item.get("context")
        text = "\n".join([*([context] if context is not None else []), item["question"], *item["options"]])
        record = {"id": item["id"]}
        if context is not None:
            record["context_sha256"] = text_sha256(context)
        record.update(text_sha256=text_sha256(text), minhash=minhash_hex(text))
        for modality in ("image", "audio"):  # a modality the release's items lack has no columns
            if modality in item:
                record[modality] = item[modality]
                record[f"{modality}_sha256"] = item[f"{modality}_sha256"]
        records.append(record)
    return records


def build_release(
    ws: Workspace,
    version: str,
    out: Path | None = None,
    notes: str = "",
    allow_partial: bool = False,
    gates: Gates | None = None,
    license: str = DEFAULT_LICENSE,
    name: str | None = None,
    actor: str = "cli",
    log: Callable[[str], None] = lambda _: None,
    rejected: bool = True,
) -> BuildResult:
    """Build VERSION from the admitted items that pass every gate; refuse, or drop them with allow_partial."""
    validate_version(version)
    claims = load_claims(ws.root)  # a damaged release-claims.toml refuses the build before anything runs
    gates = gates or default_gates()
    reconcile_releases(ws)
    with ws.session() as s:
        existing = s.get(Release, version)
    name = name or _published_name(ws, existing) or ws.root.name
    date = release_date(existing)
    target = (out or ws.root / "releases" / version).resolve()
    _check_target(ws, target, existing)

    with ws.session() as s:
        inputs = StatusInputs.load(s)
    state = load_derived(ws, inputs)
    statuses = state.statuses
    groups = {st.id: st.group for st in statuses}
    candidates = [st.id for st in statuses if st.state == "admitted"]
    if not candidates:
        raise CheckFailed("release refused: no item is admitted yet; see `curate status` for what is pending")
    log(f"{len(candidates)} admitted item(s) of {len(statuses)}; running gates")
    _import_up_front(gates.imports)
    checks = StoreChecks.of(ws)
    # the gates, reports and writers allocate per item and make no cycles worth collecting mid-build: with
    # the collector on, each collection rescans every item's records (agreement figures took 2.3x the time)
    with (
        pinned(ws, state),
        collector_paused(),
        _prefetching(ws, target, existing, candidates, checks) as prefetch,
        ThreadPoolExecutor(1) as background,
    ):
        # workspace gates (agreement statistics: CPU) run while the release is written; nothing is renamed
        # into place before they pass
        workspace_gates = background.submit(run_workspace_gates, ws, gates)
        failures = run_item_gates(ws, gates, candidates, groups)
        if failures and not allow_partial:
            raise GatesFailed(failures, workspace_gates.result())
        released = [i for i in candidates if i not in failures]
        if not released:
            raise CheckFailed(
                "release refused: every admitted item failed a gate, so nothing is left to release\n  "
                + "\n  ".join(f"{item}: {', '.join(reasons)}" for item, reasons in failures.items())
            )
        return _publish(
            ws,
            target,
            existing,
            workspace_gates,
            lambda temp: _write(
                ws,
                temp,
                version,
                date,
                released,
                failures,
                statuses,
                gates,
                notes,
                license,
                name,
                log,
                (inputs, rejected),
                existing,
                prefetch,
                checks,
                claims,
            ),
            actor,
        )


@contextlib.contextmanager
def _prefetching(
    ws: Workspace, target: Path, existing: Release | None, candidates: list[str], checks: StoreChecks
) -> Iterator[MediaPrefetch | None]:
    """The candidates' media copied while the gates run (``exports.prefetch``); removed when the build ends."""
    prefetch = MediaPrefetch.start(
        ws,
        target,
        lambda data: refuse_changed_data(existing, {"data/items.jsonl": data}),
        candidates,
        checks,
        existing is None,  # a new version: its media are copied before the snapshot is read
    )
    try:
        yield prefetch
    finally:
        if prefetch is not None:
            prefetch.close()


def _import_up_front(modules: tuple[str, ...]) -> None:
    """Import the gates' optional modules on this thread, before a background thread could import them too."""
    for module in modules:
        with contextlib.suppress(ImportError):  # not installed: the gate that needs it says so itself
            importlib.import_module(module)


def _write(
    ws: Workspace,
    root: Path,
    version: str,
    date: str,
    released: list[str],
    dropped: dict[str, list[str]],
    statuses: list[Any],
    gates: Gates,
    notes: str,
    license: str,
    name: str,
    log: Callable[[str], None],
    record: tuple[StatusInputs, bool],
    existing: Release | None = None,
    prefetch: MediaPrefetch | None = None,
    checks: StoreChecks | None = None,
    claims: ReleaseClaims | None = None,
) -> BuildResult:
    snapshot = (prefetch.snapshot_of(released) if prefetch is not None else None) or take_snapshot(ws, released)
    refuse_changed_data(existing, {"data/items.jsonl": jsonl_bytes(snapshot.items)})
    writer = ReleaseWriter(root, checks=checks)
    log(f"copying {len(snapshot.media)} media file(s)")
    jobs = [(m.path, ws.asset_path(m.asset), m.asset.sha256) for m in snapshot.media]
    with ThreadPoolExecutor(1) as background:
        # media copying is I/O and hashing (no GIL); the data files are built meanwhile. The prefetch has
        # been copying since the gates began: its files are moved in after the data files, on this thread,
        # as moving each one beside this thread's Python waits for the interpreter lock once per file
        media_copied = None if prefetch is not None else background.submit(_copy_media, writer, jobs, None)
        items_jsonl = jsonl_bytes(snapshot.items)
        writer.write_bytes("data/items.parquet", _parquet_bytes(items_jsonl, snapshot.columns))
        writer.write_bytes("data/items.jsonl", items_jsonl)
        writer.write_bytes("admission.jsonl", jsonl_bytes(snapshot.admission))
        reports = run_reports(ws, gates, released)
        duplicates, duplicates_note = _duplicates(reports, set(released))
        writer.write_json("duplicates.json", duplicates)
        media = _media_facts(snapshot)
        writer.write_json("attributions.json", {"files": media})
        stats = release_stats(snapshot.items, reports.get("agreement"))
        writer.write_json("stats.json", stats)
        write_leaf_agreement(writer, reports.get("leaf_agreement"))
        baseline_reports = write_baseline(writer, ws, released)
        recording_controls = write_recording_controls(writer, ws, released)
        admission_record = write_admission_record(
            writer, ws, version, record[0], statuses, released, dropped, record[1]
        )
        if media_copied is not None:
            media_copied.result()
    if prefetch is not None:
        _copy_media(writer, jobs, prefetch)
    if checks is not None:
        checks.remember(ws)
    states: dict[str, int] = {}
    for st in statuses:
        states[st.state] = states.get(st.state, 0) + 1
    claims = claims or ReleaseClaims()
    write_claims(writer, claims)
    facts = CardFacts(
        name=name,
        version=version,
        release_date=date,
        license=license,
        items=snapshot.items,
        admission=snapshot.admission,
        stats=stats,
        media=media,
        states=dict(sorted(states.items())),
        dropped=dropped,
        duplicates_note=duplicates_note,
        notes=notes,
        data_files=writer.entries(),
        leaf_agreement=reports.get("leaf_agreement"),
        admission_record=admission_record,
        claims=claims,
        review=ws.settings.review,
        shipped={m.path: intake_facts(m.asset) for m in snapshot.media},
        authors=released_authors(ws, released),
        consent=consent_sentences(consent_summary(ws, released)),
        human_baseline=baseline_reports,
        recording_controls=recording_controls,
    )
    writer.write_json("croissant.json", croissant(facts))
    writer.write_bytes("README.md", dataset_card(facts).encode("utf-8"))
    entries = writer.entries()
    manifest = {
        "format": FORMAT,
        "name": name,
        "version": version,
        "release_date": date,
        "partial": bool(dropped),
        "files": [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in entries],
        "items": _manifest_items(snapshot.items),
        "fingerprints": {
            "text": "context_sha256: the normalized context; text_sha256 and minhash: the normalized context, "
            "question and options joined by newlines",
            "media": "image_sha256 and audio_sha256: SHA-256 of the shipped file's bytes",
            "sketch": SKETCH_SPEC,
        },
    }
    manifest_entry = writer.write_bytes("manifest.json", canonical_json(manifest))
    total = sum(e.size for e in entries) + manifest_entry.size
    log(f"wrote {len(entries) + 1} files, {total:,} bytes")
    return BuildResult(
        version=version,
        path=root,
        items=len(snapshot.items),
        files=len(entries) + 1,
        bytes=total,
        manifest_sha256=manifest_entry.sha256,
        release_date=date,
        dropped=dropped,
        name=name,
    )


def _copy_media(writer: ReleaseWriter, jobs: Sequence[tuple[str, Path, str]], prefetch: MediaPrefetch | None) -> None:
    """The media into the release: the prefetched ones moved in, the others copied now."""
    writer.copy_media(prefetch.adopt(writer, jobs) if prefetch is not None else jobs)


def list_releases(ws: Workspace) -> list[dict[str, Any]]:
    reconcile_releases(ws)
    with ws.session() as s:
        rows = list(s.execute(select(Release)).scalars())
    return [
        {
            "version": r.version,
            "release_date": r.release_date,
            "items": r.items,
            "partial": r.partial,
            "manifest_sha256": r.manifest_sha256,
            "path": r.path,
            "present": Path(r.path).is_dir(),
        }
        for r in sorted(rows, key=lambda r: version_key(r.version))
    ]
