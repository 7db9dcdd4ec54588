"""Publishing a built release: a version is published once, by its first build, and never changes after.

A build writes into a hidden temporary folder beside its destination (``exports.build`` and each kind's builder);
publishing then, holding the workspace's write lock, claims the version in the release table and renames the
folder into place. A journal written before the rename and removed after the commit lets the next command
register a release whose build died between the two (:func:`reconcile_releases`). Any later build of a published
version must reproduce its manifest byte for byte.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from curation.errors import CheckFailed, Problem, ValidationFailed
from curation.workspace import Workspace, record_event

from .pending import PENDING, has_pending, journal_path
from .tables import Release


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
