"""`curate release build`: gate the admitted items, write a deterministic release folder, publish it once.

The folder is written under a hidden temporary name beside its destination and renamed into place, so an
interrupted build leaves nothing behind (a killed build's leftovers are removed by the next build). A version
is published by its first build: the release table keeps its date and the SHA-256 of its manifest, and any
later build of that version must reproduce the manifest byte for byte.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.bulk import collector_paused
from curation.derived import load_derived
from curation.errors import CheckFailed, Problem, ValidationFailed
from curation.release_claims import ReleaseClaims, load_claims
from curation.workflow import StatusInputs
from curation.workspace import Workspace, record_event

from .admission_record import write_admission_record
from .build_state import pinned
from .card import ITEM_FEATURES, CardFacts, croissant, dataset_card
from .claims import intake_facts, released_authors, write_claims
from .fingerprints import SKETCH_SPEC, minhash_hex, text_sha256
from .gates import Gates, default_gates, run_item_gates, run_reports, run_workspace_gates
from .leaf_agreement import write_leaf_agreement
from .pending import PENDING, has_pending, journal_path
from .prefetch import MediaPrefetch
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
    name: str = ""

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


def _stale_builds(parent: Path, name: str) -> None:
    """Remove temporary folders left by killed builds of this destination (not those of live builds)."""
    for lock_path in parent.glob(".*.tmp-*.lock"):
        with lock_path.open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(lock_path.with_suffix(""), ignore_errors=True)
            lock_path.unlink(missing_ok=True)


def _manifest_sha_of(folder: Path) -> str | None:
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
        ws, target, lambda data: refuse_changed_data(existing, {"data/items.jsonl": data}), candidates, checks
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


def _published_name(ws: Workspace, existing: Release | None) -> str | None:
    """The dataset name VERSION was published under, so that a rebuild from a renamed folder keeps it."""
    if existing is None:
        return None
    for event in reversed(ws.events(f"release:{existing.version}")):
        if (
            event.action == "release.published"
            and (event.after or {}).get("name")
            and isinstance((event.after or {}).get("name"), str)
        ):
            return str(event.after["name"])  # type: ignore[index]
    # older builds did not record the name: read it from the published manifest, where it was or, when the
    # workspace folder has moved since, from its releases/ folder
    for folder in (Path(existing.path), ws.root / "releases" / existing.version):
        try:
            published = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(published, dict) and isinstance(published.get("name"), str) and published["name"]:
            return str(published["name"])
    return None


def _check_target(ws: Workspace, target: Path, existing: Release | None) -> None:
    """Refuse a destination before anything is written: the workspace (but its releases/ folder), a file, or a
    folder holding something other than this version's release."""
    root = ws.root.resolve()
    inside_releases = target.is_relative_to(root / "releases") and target != root / "releases"
    if root.is_relative_to(target) or (target.is_relative_to(root) and not inside_releases):
        raise ValidationFailed(
            [
                Problem(
                    f"{target} is the workspace folder or inside it; a release goes to a folder of its own "
                    f"(default {root / 'releases'}/VERSION) — choose another --out",
                    "--out",
                )
            ]
        )
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise ValidationFailed([Problem(f"{target} exists and is not a release folder; choose another --out", "--out")])
    if target.is_dir():
        present = _manifest_sha_of(target)
        if present is None or (existing is not None and present != existing.manifest_sha256):
            raise CheckFailed(f"release refused: {target} exists and holds other content; remove it or choose --out")


def _publish(
    ws: Workspace,
    target: Path,
    existing: Release | None,
    workspace_gates: Future[list[str]],
    write: Callable[[Path], BuildResult],
    actor: str,
) -> BuildResult:
    """Write into a hidden temporary folder, then, holding the workspace's write lock, claim the version and
    rename the folder into place.

    The claim makes publishing exclusive: of two builds of a new version the second to take the lock is told
    it lost. A journal written before the rename and removed after the commit lets the next command register
    a release whose build died between the two (:func:`reconcile_releases`).
    """
    _check_target(ws, target, existing)  # every kind's builder publishes here, so none can skip the check
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
                raise _other_content(existing, result)
            with ws.writing() as s:
                _claim(s, ws, target, temp, existing, result, actor)
        finally:
            shutil.rmtree(temp, ignore_errors=True)
            lock_path.unlink(missing_ok=True)
    journal_path(ws.root, result.version).unlink(missing_ok=True)
    result.path = target
    return result


def _other_content(existing: Release, result: BuildResult) -> CheckFailed:
    return CheckFailed(
        f"release refused: version {result.version} was published on {existing.release_date} with other content "
        f"(manifest {existing.manifest_sha256[:12]}, now {result.manifest_sha256[:12]}); published "
        "versions are immutable — build a new version (e.g. bump the patch number)"
    )


def _claim(  # type: ignore[no-untyped-def]
    s, ws: Workspace, target: Path, temp: Path, existing: Release | None, result: BuildResult, actor: str
) -> None:
    """Inside the write transaction: register VERSION (if new) and move the built folder into place."""
    version = result.version
    row = s.get(Release, version)
    if row is not None and existing is None:
        raise CheckFailed(
            f"release refused: version {version} was published by another build while this one ran "
            f"({row.path}, manifest {row.manifest_sha256[:12]}); this build's files were discarded — verify that "
            "release, or build a new version"
        )
    if row is not None and row.manifest_sha256 != result.manifest_sha256:
        raise _other_content(row, result)
    if target.exists():
        if _manifest_sha_of(target) != result.manifest_sha256:
            raise CheckFailed(f"release refused: {target} exists and holds other content; remove it or choose --out")
        result.unchanged = True
    if row is not None:
        if not result.unchanged:
            os.rename(temp, target)
        return
    entry = {
        "version": version,
        "release_date": result.release_date,
        "manifest_sha256": result.manifest_sha256,
        "items": result.items,
        "partial": bool(result.dropped),
        "path": str(target),
        "built_by": actor,
        "name": result.name,
        "dropped": result.dropped,
    }
    if not result.unchanged:
        journal = journal_path(ws.root, version)
        journal.parent.mkdir(exist_ok=True)
        with journal.open("w", encoding="utf-8") as fh:
            json.dump(entry, fh)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.rename(temp, target)
        except BaseException:
            journal.unlink(missing_ok=True)
            raise
    _register(s, entry, actor, "release.published")


def _register(s, entry: dict[str, Any], actor: str, action: str) -> None:  # type: ignore[no-untyped-def]
    s.add(
        Release(
            version=entry["version"],
            release_date=entry["release_date"],
            manifest_sha256=entry["manifest_sha256"],
            items=entry["items"],
            partial=entry["partial"],
            path=entry["path"],
            built_by=entry["built_by"],
        )
    )
    record_event(
        s,
        actor,
        action,
        f"release:{entry['version']}",
        None,
        {
            "manifest_sha256": entry["manifest_sha256"],
            "items": entry["items"],
            "dropped": entry["dropped"],
            "name": entry["name"],
        },
    )


def reconcile_releases(ws: Workspace) -> list[str]:
    """Finish or undo publications interrupted between the folder's rename and the database commit.

    A journal whose folder holds the journaled manifest is registered (the folder was complete before it was
    renamed); any other journal is dropped (nothing was published). Returns the versions registered.
    """
    if not has_pending(ws.root):
        return []
    registered = []
    with ws.writing() as s:  # a live publisher holds this lock from its journal to its commit
        for journal in sorted((ws.root / PENDING).glob("*.json")):
            try:
                entry = json.loads(journal.read_text(encoding="utf-8"))
                version = entry["version"]
                if (
                    s.get(Release, version) is None
                    and _manifest_sha_of(Path(entry["path"])) == entry["manifest_sha256"]
                ):
                    _register(s, entry, str(entry["built_by"]), "release.published")
                    registered.append(version)
            except (OSError, ValueError, KeyError, TypeError):
                pass  # a journal cut short by the crash: its rename never happened
            journal.unlink(missing_ok=True)
    return registered


def refuse_changed_data(existing: Release | None, data: dict[str, bytes]) -> None:
    """A rebuild of a published version whose data files differ is refused before any medium is copied (the
    data files name every medium by hash, so equal data means equal media; the manifest check still follows)."""
    if existing is None:
        return
    for relative, content in sorted(data.items()):
        try:
            published = (Path(existing.path) / relative).read_bytes()
        except OSError:
            return  # the published folder is gone or laid out otherwise: the full build compares manifests
        if published != content:
            raise CheckFailed(
                f"release refused: version {existing.version} was published on {existing.release_date} with other "
                f"content (its {relative} differs); published versions are immutable — build a new version (e.g. "
                "bump the patch number)"
            )


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
    with ThreadPoolExecutor(1) as background:
        # media copying is I/O and hashing (no GIL); the data files are built meanwhile
        media_copied = background.submit(
            _copy_media, writer, [(m.path, ws.asset_path(m.asset), m.asset.sha256) for m in snapshot.media], prefetch
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
        write_leaf_agreement(writer, reports.get("leaf_agreement"))
        admission_record = write_admission_record(
            writer, ws, version, record[0], statuses, released, dropped, record[1]
        )
        media_copied.result()
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
