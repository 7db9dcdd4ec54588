"""`curate release verify` and `curate release diff`: check a release folder against its manifest, and compare
two releases item by item (the errata list). Neither needs a workspace.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curation.errors import CurateError

from .writer import CHUNK


@dataclass
class Mismatch:
    kind: str
    """changed, missing, extra, broken_reference or invalid."""
    path: str
    detail: str

    def as_json(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path, "detail": self.detail}


@dataclass
class VerifyReport:
    folder: Path
    version: str = ""
    files: int = 0
    items: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def as_json(self) -> dict[str, Any]:
        return {
            "folder": str(self.folder),
            "version": self.version,
            "files": self.files,
            "items": self.items,
            "ok": self.ok,
            "mismatches": [m.as_json() for m in self.mismatches],
        }


def sha256_file(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    with path.open("rb", buffering=0) as fh:
        while n := fh.readinto(buffer):
            digest.update(view[:n])
            size += n
    return digest.hexdigest(), size


def _read_manifest(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise CurateError(f"{folder} is not a folder; give the path of a release folder")
    path = folder / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CurateError(f"{path}: missing; {folder} is not a release folder (or its manifest was removed)") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CurateError(f"{path}: not valid JSON ({exc}); the manifest is damaged") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise CurateError(f"{path}: not an omnicurate release manifest (no file list)")
    return manifest


def read_items(folder: Path) -> dict[str, dict[str, Any]]:
    """The items of a release, by id, from data/items.jsonl."""
    path = folder / "data" / "items.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise CurateError(f"{path}: missing; is {folder} a release folder?") from exc
    items = {}
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CurateError(f"{path}:{number}: not valid JSON ({exc})") from exc
        items[record["id"]] = record
    return items


def verify_release(folder: Path, manifest_sha256: str | None = None) -> VerifyReport:
    """Every file against the manifest (hashed once), extra files, and every item's media references.

    With ``manifest_sha256`` (as `curate release list` shows it) the manifest itself is checked too, which
    catches files and manifest edited together.
    """
    folder = folder.resolve()
    manifest = _read_manifest(folder)
    report = VerifyReport(folder, str(manifest.get("version", "")))
    if manifest_sha256 is not None:
        actual, _ = sha256_file(folder / "manifest.json")
        if actual != manifest_sha256.lower():
            report.mismatches.append(
                Mismatch("changed", "manifest.json", f"sha256 {actual[:12]}…, expected {manifest_sha256[:12]}…")
            )
    listed: dict[str, dict[str, Any]] = {}
    for number, entry in enumerate(manifest["files"], 1):
        rel = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(rel, str) or not {"sha256", "size"} <= set(entry):
            report.mismatches.append(
                Mismatch("invalid", "manifest.json", f"file entry {number} lacks path, sha256 or size")
            )
        elif rel.startswith("/") or ".." in Path(rel).parts:
            report.mismatches.append(
                Mismatch("invalid", "manifest.json", f"file entry {rel!r} points outside the release")
            )
        else:
            listed[rel] = entry
    report.files = len(listed) + 1
    for rel, entry in sorted(listed.items()):
        path = folder / rel
        if not path.is_file():
            report.mismatches.append(Mismatch("missing", rel, "listed in manifest.json but not in the folder"))
            continue
        sha, size = sha256_file(path)
        if sha != entry["sha256"] or size != entry["size"]:
            report.mismatches.append(
                Mismatch(
                    "changed",
                    rel,
                    f"sha256 {sha[:12]}… size {size}, manifest says {entry['sha256'][:12]}… size {entry['size']}",
                )
            )
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if (path.is_file() or path.is_symlink()) and rel != "manifest.json" and rel not in listed:
            report.mismatches.append(Mismatch("extra", rel, "in the folder but not listed in manifest.json"))
    report.mismatches += _check_references(folder, manifest, listed, report)
    return report


def _check_references(
    folder: Path, manifest: dict[str, Any], listed: dict[str, Any], report: VerifyReport
) -> list[Mismatch]:
    """Items in the JSONL, the Parquet file and the manifest agree, and each names media that exist."""
    problems: list[Mismatch] = []
    if not (folder / "data" / "items.jsonl").is_file():
        return problems
    try:
        items = read_items(folder)
    except CurateError as exc:
        return [Mismatch("invalid", "data/items.jsonl", str(exc))]
    report.items = len(items)
    for item_id, item in sorted(items.items()):
        for kind in ("image", "audio"):
            if kind not in item:  # the release's items lack this modality
                continue
            rel = item.get(kind, "")
            if rel not in listed or not (folder / rel).is_file():
                problems.append(
                    Mismatch("broken_reference", "data/items.jsonl", f"item {item_id}: {kind} {rel} is missing")
                )
    manifest_ids = sorted(i["id"] for i in manifest.get("items", []))
    if manifest_ids != sorted(items):
        problems.append(Mismatch("invalid", "manifest.json", "its item list differs from data/items.jsonl"))
    parquet = folder / "data" / "items.parquet"
    if parquet.is_file():
        try:
            import pyarrow.parquet as pq

            names = pq.read_schema(parquet).names
            rows = pq.read_table(parquet, columns=[c for c in ("id", "image", "audio") if c in names]).to_pylist()
        except Exception as exc:  # pyarrow raises several unrelated types for damaged files
            return [*problems, Mismatch("invalid", "data/items.parquet", f"not readable ({exc})")]
        from_parquet = {r["id"]: (r.get("image"), r.get("audio")) for r in rows}
        from_jsonl = {i: (r.get("image"), r.get("audio")) for i, r in items.items()}
        if from_parquet != from_jsonl:
            problems.append(
                Mismatch("invalid", "data/items.parquet", "its items or media differ from data/items.jsonl")
            )
    return problems


DIFF_IGNORED = ("id",)


def diff_releases(old: Path, new: Path) -> dict[str, Any]:
    """Items added, removed and changed (with each changed field's old and new value) from OLD to NEW."""
    a, b = read_items(old.resolve()), read_items(new.resolve())
    changed = []
    for item_id in sorted(set(a) & set(b)):
        fields = {
            key: {"old": a[item_id].get(key), "new": b[item_id].get(key)}
            for key in sorted(set(a[item_id]) | set(b[item_id]))
            if key not in DIFF_IGNORED and a[item_id].get(key) != b[item_id].get(key)
        }
        if fields:
            changed.append({"id": item_id, "fields": fields})
    return {
        "old": {"path": str(old), "version": _version(old)},
        "new": {"path": str(new), "version": _version(new)},
        "added": sorted(set(b) - set(a)),
        "removed": sorted(set(a) - set(b)),
        "changed": changed,
        "unchanged": sum(1 for i in set(a) & set(b)) - len(changed),
    }


def _version(folder: Path) -> str:
    try:
        return str(json.loads((folder / "manifest.json").read_text(encoding="utf-8")).get("version", ""))
    except (OSError, json.JSONDecodeError):
        return ""
