"""`curate release build`: gate the admitted items, write a deterministic release folder, publish it once.

The folder is written under a hidden temporary name beside its destination and renamed into place, so an
interrupted build leaves nothing behind (a killed build's leftovers are removed by the next build). A version
is published by its first build: the release table keeps its date and the SHA-256 of its manifest, and any
later build of that version must reproduce the manifest byte for byte.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.errors import CheckFailed, CurateError, Problem, ValidationFailed
from curation.workflow import derive_status
from curation.workspace import Workspace, record_event

from .card import CardFacts, croissant, dataset_card
from .fingerprints import SKETCH_SPEC, minhash_hex, text_sha256
from .gates import Gates, default_gates, run_item_gates, run_reports, run_workspace_gates
from .snapshot import ITEM_COLUMNS, Snapshot, take_snapshot
from .stats import release_stats
from .tables import Release
from .writer import ReleaseWriter, canonical_json, jsonl_bytes

FORMAT = "omnicurate-release/1"
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)
DEFAULT_LICENSE = "CC-BY-4.0"


class GatesFailed(CheckFailed):
    """The build was refused: it carries every blocking item and workspace-level failure."""

    def __init__(self, items: dict[str, list[str]], workspace: list[str]) -> None:
        self.items = items
        self.workspace = workspace
        lines = [f"{item}: {', '.join(reasons)}" for item, reasons in items.items()] + workspace
        hint = " (or build from the passing items with --allow-partial)" if items and not workspace else ""
        super().__init__(
            "release refused: gates failed\n  " + "\n  ".join(lines) + f"\nfix these and build again{hint}"
        )


def validate_version(version: str) -> str:
    if not SEMVER.match(version):
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


def release_date(existing: Release | None) -> str:
    """The published date if the version exists, else SOURCE_DATE_EPOCH's day, else today (UTC)."""
    if existing is not None:
        return existing.release_date
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        try:
            return datetime.fromtimestamp(int(epoch), UTC).date().isoformat()
        except ValueError as exc:
            raise ValidationFailed(
                [Problem(f"SOURCE_DATE_EPOCH={epoch!r} is not a Unix time", "SOURCE_DATE_EPOCH")]
            ) from exc
    return datetime.now(UTC).date().isoformat()


@dataclass
class BuildResult:
    version: str
    path: Path
    items: int
    files: int
    bytes: int
    manifest_sha256: str
    release_date: str
    dropped: dict[str, list[str]] = field(default_factory=dict)
    unchanged: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "path": str(self.path),
            "items": self.items,
            "files": self.files,
            "bytes": self.bytes,
            "manifest_sha256": self.manifest_sha256,
            "release_date": self.release_date,
            "partial": bool(self.dropped),
            "dropped": self.dropped,
            "unchanged": self.unchanged,
        }


def _parquet_bytes(jsonl: bytes, columns: tuple[str, ...] = ITEM_COLUMNS) -> bytes:
    """data/items.parquet from the JSONL bytes, so both hold the same records; fixed schema and writer settings
    make the same rows give the same bytes (for one pyarrow version). Parsing JSON avoids `pa.array` on Python
    lists, which imports pandas (a second or more of the build)."""
    try:
        import pyarrow as pa
        import pyarrow.json as pa_json
        import pyarrow.parquet as pq
    except ModuleNotFoundError as exc:
        raise CurateError("writing data/items.parquet needs pyarrow: pip install 'omnicurate[release]'") from exc

    types = {
        "options": pa.list_(pa.string()),
        "ambiguous": pa.list_(pa.string()),
        "tier": pa.int32(),
        "revision": pa.int32(),
    }
    schema = pa.schema([pa.field(c, types.get(c, pa.string())) for c in columns])
    table = (
        pa_json.read_json(
            pa.BufferReader(jsonl),
            read_options=pa_json.ReadOptions(use_threads=False, block_size=max(1 << 20, len(jsonl) + 1)),
            parse_options=pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"),
        )
        .select(list(columns))
        .combine_chunks()
    )
    sink = pa.BufferOutputStream()
    pq.write_table(
        table,
        sink,
        row_group_size=10_000,
        compression="zstd",
        compression_level=9,
        use_dictionary=True,
        write_statistics=True,
        version="2.6",
        data_page_version="1.0",
        store_schema=True,
    )
    return sink.getvalue().to_pybytes()


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


def _stale_builds(parent: Path, name: str) -> None:
    """Remove temporary folders left by killed builds of this destination (not those of live builds)."""
    for lock_path in parent.glob(f".{name}.tmp-*.lock"):
        with lock_path.open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(lock_path.with_suffix(""), ignore_errors=True)
            lock_path.unlink(missing_ok=True)


def _manifest_sha_of(folder: Path) -> str | None:
    import hashlib

    manifest = folder / "manifest.json"
    return hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.is_file() else None


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
) -> BuildResult:
    """Build VERSION from the admitted items that pass every gate; refuse, or drop them with allow_partial."""
    validate_version(version)
    gates = gates or default_gates()
    name = name or ws.root.name
    with ws.session() as s:
        existing = s.get(Release, version)
    date = release_date(existing)

    statuses = derive_status(ws)
    groups = {st.id: st.group for st in statuses}
    candidates = [st.id for st in statuses if st.state == "admitted"]
    if not candidates:
        raise CheckFailed("release refused: no item is admitted yet; see `curate status` for what is pending")
    log(f"{len(candidates)} admitted item(s) of {len(statuses)}; running gates")
    with ThreadPoolExecutor(1) as background:
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
        target = (out or ws.root / "releases" / version).resolve()
        result = _publish(
            target,
            existing,
            workspace_gates,
            lambda temp: _write(
                ws, temp, version, date, released, failures, statuses, gates, notes, license, name, log
            ),
        )
    if existing is None:
        with ws.writing() as s:
            if s.get(Release, version) is None:
                s.add(
                    Release(
                        version=version,
                        release_date=date,
                        manifest_sha256=result.manifest_sha256,
                        items=result.items,
                        partial=bool(failures),
                        path=str(target),
                        built_by=actor,
                    )
                )
                record_event(
                    s,
                    actor,
                    "release.published",
                    f"release:{version}",
                    None,
                    {"manifest_sha256": result.manifest_sha256, "items": result.items, "dropped": failures},
                )
    return result


def _publish(
    target: Path,
    existing: Release | None,
    workspace_gates: Future[list[str]],
    write: Callable[[Path], BuildResult],
) -> BuildResult:
    """Write into a hidden temporary folder, then rename it into place if every check still allows it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _stale_builds(target.parent, target.name)
    token = uuid.uuid4().hex[:12]
    temp = target.parent / f".{target.name}.tmp-{token}"
    lock_path = target.parent / f".{target.name}.tmp-{token}.lock"
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            result = write(temp)
            workspace_failures = workspace_gates.result()
            if workspace_failures:
                raise GatesFailed({}, workspace_failures)
            if existing is not None and existing.manifest_sha256 != result.manifest_sha256:
                raise CheckFailed(
                    f"release refused: version {result.version} was published on {existing.release_date} with other content "
                    f"(manifest {existing.manifest_sha256[:12]}, now {result.manifest_sha256[:12]}); published "
                    "versions are immutable — build a new version (e.g. bump the patch number)"
                )
            if target.exists():
                if _manifest_sha_of(target) != result.manifest_sha256:
                    raise CheckFailed(
                        f"release refused: {target} exists and holds other content; remove it or choose --out"
                    )
                result.unchanged = True
            else:
                os.rename(temp, target)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
            lock_path.unlink(missing_ok=True)
    result.path = target
    return result


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
) -> BuildResult:
    snapshot = take_snapshot(ws, released)
    writer = ReleaseWriter(root)
    log(f"copying {len(snapshot.media)} media file(s)")
    with ThreadPoolExecutor(1) as background:
        # media copying is I/O and hashing (no GIL); the data files are built meanwhile
        media_copied = background.submit(
            writer.copy_media, [(m.path, ws.asset_path(m.asset), m.asset.sha256) for m in snapshot.media]
        )
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
        media_copied.result()
    states: dict[str, int] = {}
    for st in statuses:
        states[st.state] = states.get(st.state, 0) + 1
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
    )


def list_releases(ws: Workspace) -> list[dict[str, Any]]:
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
