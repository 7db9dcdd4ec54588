"""`curate release verify` and `curate release diff`: check a release folder against its manifest, and compare
two releases item by item (the errata list). Neither needs a workspace.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curation.errors import CurateError, ValidationFailed
from curation.jsonl import open_regular

from .admission_record import FILES as ADMISSION_FILES
from .admission_record import contradicted_attestations
from .fingerprints import text_sha256
from .writer import CHUNK

if TYPE_CHECKING:
    from curation.kinds import ReleaseLayout

SHA256 = re.compile(r"[0-9a-f]{64}")

ATTESTATIONS = ADMISSION_FILES["attestations"]


@dataclass
class Mismatch:
    kind: str
    """changed, missing, extra, symlink, broken_reference or invalid."""
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


MEDIA_NAME = re.compile(r"media/([0-9a-f]{64})\.[A-Za-z0-9]+")
"""A shipped medium's path: named by the SHA-256 of its bytes, whatever the kind."""


def _valid_version(version: Any) -> bool:
    """The rule every builder applies (``exports.build.validate_version``), so a published manifest passes it."""
    from .build import MAX_VERSION_CHARS, SEMVER

    return isinstance(version, str) and len(version) <= MAX_VERSION_CHARS and SEMVER.fullmatch(version) is not None


def _read_manifest(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        raise CurateError(f"{folder} is not a folder; give the path of a release folder")
    path = folder / "manifest.json"
    if path.is_symlink():
        raise CurateError(f"{path}: a symbolic link; a release's manifest must be a plain file")
    if not path.exists():
        raise CurateError(f"{path}: missing; {folder} is not a release folder (or its manifest was removed)")
    try:
        with open_regular(path) as fh:  # a FIFO or device named manifest.json is refused, never read
            manifest = json.loads(fh.read().decode("utf-8"))
    except ValidationFailed as exc:
        raise CurateError(f"{path}: {exc.problems[0].message}; a release's manifest is a plain file") from exc
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise CurateError(f"{path}: not valid JSON ({exc}); the manifest is damaged") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise CurateError(f"{path}: not an omnicurate release manifest (no file list)")
    return manifest


def release_layout(kind: str) -> ReleaseLayout | None:
    """The registered layout of a release of KIND (None: a kind this installation does not know)."""
    from curation.kinds import kind_of

    try:
        return kind_of(kind).release
    except KeyError:
        return None


def read_items(folder: Path, rel: str = "data/items.jsonl") -> dict[str, dict[str, Any]]:
    """The units of a release, by id, from ``rel`` (lines end at ``\\n`` only)."""
    path = folder / rel
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise CurateError(f"{path}: missing; is {folder} a release folder?") from exc
    items: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise CurateError(f"{path}:{number}: not valid JSON ({exc})") from exc
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise CurateError(f"{path}:{number}: not an item record (an object with a string id)")
        if record["id"] in items:
            raise CurateError(f"{path}:{number}: item {record['id']} appears twice")
        items[record["id"]] = record
    return items


def _symlinks(folder: Path) -> list[str]:
    """Every symbolic link under the release folder (a release holds plain files only)."""
    found = []
    for here, dirs, files in os.walk(folder, followlinks=False):
        for name in dirs + files:
            path = Path(here) / name
            if path.is_symlink():
                found.append(path.relative_to(folder).as_posix())
    return sorted(found)


def _valid_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("path"), str)
        and isinstance(entry.get("sha256"), str)
        and SHA256.fullmatch(entry["sha256"]) is not None
        and type(entry.get("size")) is int
        and entry["size"] >= 0
    )


def verify_release(folder: Path, manifest_sha256: str | None = None) -> VerifyReport:
    """Every file against the manifest (hashed once), extra files, symbolic links, and every internal
    cross-reference: the manifest's per-item hashes against its file list, the items in data/items.jsonl,
    data/items.parquet and attributions.json against the manifest.

    With ``manifest_sha256`` (as `curate release list` shows it) the manifest itself is checked too, which
    catches files and manifest edited together.
    """
    folder = folder.resolve()
    manifest = _read_manifest(folder)
    version = manifest.get("version")
    report = VerifyReport(folder, version if _valid_version(version) else "")
    if not _valid_version(version):  # never printed raw: it may hold newlines, '../' or terminal escapes
        report.mismatches.append(
            Mismatch("invalid", "manifest.json", f"version {ascii(version)} is not a semantic version (e.g. 1.0.0)")
        )
    if manifest_sha256 is not None:
        actual, _ = sha256_file(folder / "manifest.json")
        if actual != manifest_sha256.lower():
            report.mismatches.append(
                Mismatch("changed", "manifest.json", f"sha256 {actual[:12]}…, expected {manifest_sha256[:12]}…")
            )
    links = set(_symlinks(folder))
    for rel in sorted(links):
        report.mismatches.append(Mismatch("symlink", rel, "a symbolic link; a release holds plain files only"))
    listed: dict[str, dict[str, Any]] = {}
    for number, entry in enumerate(manifest["files"], 1):
        if not _valid_entry(entry):
            complete = isinstance(entry, dict) and {"path", "sha256", "size"} <= set(entry)
            detail = "holds a malformed path, sha256 or size" if complete else "lacks path, sha256 or size"
            report.mismatches.append(Mismatch("invalid", "manifest.json", f"file entry {number} {detail}"))
            continue
        rel = entry["path"]
        if rel.startswith("/") or ".." in Path(rel).parts or rel == "manifest.json":
            report.mismatches.append(
                Mismatch("invalid", "manifest.json", f"file entry {rel!r} points outside the release")
            )
        elif rel in listed:
            report.mismatches.append(Mismatch("invalid", "manifest.json", f"file entry {rel!r} is listed twice"))
        else:
            listed[rel] = entry
    report.files = len(listed) + 1
    for rel, entry in sorted(listed.items()):
        path = folder / rel
        through_link = any(rel == link or rel.startswith(link + "/") for link in links)
        if through_link:
            continue  # reported as a symlink; never followed out of the release
        if not path.is_file():
            report.mismatches.append(Mismatch("missing", rel, "listed in manifest.json but not in the folder"))
            continue
        sha, size = sha256_file(path)
        named = MEDIA_NAME.fullmatch(rel)
        if named is not None and named.group(1) != entry["sha256"]:  # media are named by their hash
            report.mismatches.append(
                Mismatch(
                    "invalid", rel, f"a medium is named by its SHA-256; the manifest gives {entry['sha256'][:12]}…"
                )
            )
        if sha != entry["sha256"] or size != entry["size"]:
            report.mismatches.append(
                Mismatch(
                    "changed",
                    rel,
                    f"sha256 {sha[:12]}… size {size}, manifest says {entry['sha256'][:12]}… size {entry['size']}",
                )
            )
    for here, _dirs, files in os.walk(folder, followlinks=False):
        for name in files:
            rel = (Path(here) / name).relative_to(folder).as_posix()
            if rel != "manifest.json" and rel not in listed and rel not in links:
                report.mismatches.append(Mismatch("extra", rel, "in the folder but not listed in manifest.json"))
    report.mismatches += _check_references(folder, manifest, listed, report)
    if ATTESTATIONS in listed:
        report.mismatches += [Mismatch("invalid", where, why) for where, why in contradicted_attestations(folder)]
    return report


def _check_references(
    folder: Path, manifest: dict[str, Any], listed: dict[str, Any], report: VerifyReport
) -> list[Mismatch]:
    """The manifest's items, the kind's unit file (data/items.jsonl, data/transitions.jsonl; a judge_task
    release's data files), data/items.parquet, croissant.json and attributions.json agree with each other and
    with the manifest's file list, and each unit names media that exist."""
    kind = str(manifest.get("kind", "mcq"))
    problems = _check_croissant(folder, listed)
    layout = release_layout(kind)
    if layout is None:
        return [*problems, Mismatch("invalid", "manifest.json", f"unknown kind {kind!r}; this curate cannot check it")]
    problems += [
        Mismatch("missing", rel, f"a {kind} release has {rel}; it is not in the file list")
        for rel in layout.data_files
        if rel not in listed
    ]
    if kind == "judge_task":
        from .judge_verify import check_judge_release

        report.items, found = check_judge_release(folder, manifest, listed)
        return problems + [Mismatch(*problem) for problem in found]
    if layout.unit_file is None:
        return problems
    unit_file, fields = layout.unit_file, layout.media_fields
    problems += _check_manifest_items(manifest, listed, fields)
    if not (folder / unit_file).is_file() or (folder / unit_file).is_symlink():
        return problems
    try:
        items = read_items(folder, unit_file)
    except CurateError as exc:
        return [*problems, Mismatch("invalid", unit_file, str(exc))]
    report.items = len(items)
    for item_id, item in sorted(items.items()):
        for field_name in fields:
            if field_name not in item:  # the release's items lack this modality
                continue
            rel = item.get(field_name, "")
            if not isinstance(rel, str) or rel not in listed or not (folder / rel).is_file():
                problems.append(
                    Mismatch("broken_reference", unit_file, f"item {item_id}: {field_name} {rel} is missing")
                )
    records = {r["id"]: r for r in manifest.get("items", []) if isinstance(r, dict) and isinstance(r.get("id"), str)}
    if sorted(records) != sorted(items):
        problems.append(Mismatch("invalid", "manifest.json", f"its item list differs from {unit_file}"))
    for item_id in sorted(set(records) & set(items)):
        problems += _check_item_record(records[item_id], items[item_id], fields, unit_file)
    if kind == "story_transition":
        from .story_duplicates import check_duplicate_annotations

        problems += [Mismatch(*found) for found in check_duplicate_annotations(folder, items)]
    problems += _check_attributions(folder, listed)
    parquet = unit_file.removesuffix(".jsonl") + ".parquet"  # data/items.parquet, data/transitions.parquet
    if (folder / parquet).is_file() and not (folder / parquet).is_symlink():
        from .release_parquet import mirror_problems

        problems += [Mismatch("invalid", parquet, why) for why in mirror_problems(folder, parquet, items, unit_file)]
    return problems


def _check_manifest_items(
    manifest: dict[str, Any], listed: dict[str, Any], fields: tuple[str, ...] = ("image", "audio")
) -> list[Mismatch]:
    """Each per-item record of the manifest is well formed and its media hashes are those of its file list."""
    problems: list[Mismatch] = []
    records = manifest.get("items", [])
    if not isinstance(records, list):
        return [Mismatch("invalid", "manifest.json", "its items are not a list")]
    seen: set[str] = set()
    for number, record in enumerate(records, 1):
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            problems.append(Mismatch("invalid", "manifest.json", f"item record {number} has no string id"))
            continue
        item_id = record["id"]
        if item_id in seen:
            problems.append(Mismatch("invalid", "manifest.json", f"item {item_id} is listed twice"))
        seen.add(item_id)
        for kind in fields:
            if kind not in record and f"{kind}_sha256" not in record:  # the release's items lack this modality
                continue
            rel, sha = record.get(kind), record.get(f"{kind}_sha256")
            entry = listed.get(rel) if isinstance(rel, str) else None
            if entry is None:
                problems.append(
                    Mismatch(
                        "broken_reference", "manifest.json", f"item {item_id}: {kind} {rel} is not in its file list"
                    )
                )
            elif sha != entry["sha256"]:
                problems.append(
                    Mismatch(
                        "invalid",
                        "manifest.json",
                        f"item {item_id}: {kind}_sha256 {str(sha)[:12]}… contradicts the file list's "
                        f"{entry['sha256'][:12]}… for {rel}",
                    )
                )
    return problems


def _check_item_record(
    record: dict[str, Any],
    item: dict[str, Any],
    fields: tuple[str, ...] = ("image", "audio"),
    unit_file: str = "data/items.jsonl",
) -> list[Mismatch]:
    """The manifest's record of an item names its media and fingerprints its text as the unit file has them."""
    problems = []
    item_id = item["id"]
    for kind in fields:
        if record.get(kind) != item.get(kind):
            problems.append(Mismatch("invalid", "manifest.json", f"item {item_id}: {kind} differs from {unit_file}"))
    current, following = item.get("current_text"), item.get("next_text")
    if isinstance(current, str) and isinstance(following, str):  # a story transition's narrations
        expected = {
            "current_text_sha256": text_sha256(current),
            "next_text_sha256": text_sha256(following),
            "text_sha256": text_sha256(f"{current}\n{following}"),
        }
        if any(record.get(key) != value for key, value in expected.items()):
            problems.append(
                Mismatch("invalid", "manifest.json", f"item {item_id}: text fingerprints differ from {unit_file}")
            )
    context, question, options = item.get("context"), item.get("question"), item.get("options")
    if isinstance(context, str) and isinstance(question, str) and isinstance(options, list):
        texts = [context, question, *(o for o in options if isinstance(o, str))]
        if record.get("context_sha256") != text_sha256(context) or record.get("text_sha256") != text_sha256(
            "\n".join(texts)
        ):
            problems.append(
                Mismatch("invalid", "manifest.json", f"item {item_id}: text fingerprints differ from data/items.jsonl")
            )
    return problems


def _check_croissant(folder: Path, listed: dict[str, Any]) -> list[Mismatch]:
    """Each file croissant.json describes is in the file list with the sha256 croissant.json gives it."""
    path = folder / "croissant.json"
    if "croissant.json" not in listed or not path.is_file() or path.is_symlink():
        return []
    try:
        distribution = json.loads(path.read_text(encoding="utf-8")).get("distribution", [])
    except (ValueError, AttributeError, RecursionError) as exc:
        return [Mismatch("invalid", "croissant.json", f"not Croissant metadata ({exc})")]
    problems = []
    for entry in distribution if isinstance(distribution, list) else []:
        if not isinstance(entry, dict) or "sha256" not in entry:
            continue  # a FileSet (a glob of media) carries no digest of its own
        rel = entry.get("contentUrl")
        listed_entry = listed.get(rel) if isinstance(rel, str) else None
        if listed_entry is None or entry.get("sha256") != listed_entry["sha256"]:
            problems.append(Mismatch("invalid", "croissant.json", f"{rel}: not in the file list with this sha256"))
    return problems


def _check_attributions(folder: Path, listed: dict[str, Any]) -> list[Mismatch]:
    """attributions.json names each shipped file with the hash the file list gives it."""
    path = folder / "attributions.json"
    if "attributions.json" not in listed or not path.is_file() or path.is_symlink():
        return []
    try:
        files = json.loads(path.read_text(encoding="utf-8")).get("files", [])
    except (ValueError, AttributeError, RecursionError) as exc:
        return [Mismatch("invalid", "attributions.json", f"not an attribution list ({exc})")]
    problems = []
    for entry in files if isinstance(files, list) else []:
        rel = entry.get("file") if isinstance(entry, dict) else None
        listed_entry = listed.get(rel) if isinstance(rel, str) else None
        if listed_entry is None or entry.get("sha256") != listed_entry["sha256"]:
            problems.append(Mismatch("invalid", "attributions.json", f"{rel}: not in the file list with this sha256"))
    return problems


DIFF_IGNORED = ("id",)


def read_units(folder: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """(kind, units by id) of a release: mcq items, story transitions, or judge tasks with their checklists."""
    try:
        kind = str(json.loads((folder / "manifest.json").read_text(encoding="utf-8")).get("kind", "mcq"))
    except (OSError, ValueError, AttributeError):
        kind = "mcq"
    if kind == "judge_task":
        from .judge_verify import read_tasks

        return kind, read_tasks(folder)
    layout = release_layout(kind)
    return kind, read_items(folder, layout.unit_file if layout and layout.unit_file else "data/items.jsonl")


def diff_releases(old: Path, new: Path) -> dict[str, Any]:
    """Units (items, transitions, tasks) added, removed and changed (with each changed field's old and new
    value) from OLD to NEW; both must be releases of one kind."""
    (kind_a, a), (kind_b, b) = read_units(old.resolve()), read_units(new.resolve())
    if kind_a != kind_b:
        raise CurateError(f"{old} is a {kind_a} release and {new} a {kind_b} release; compare releases of one kind")
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
        "kind": kind_a,
        "old": {"path": str(old), "version": _version(old)},
        "new": {"path": str(new), "version": _version(new)},
        "added": sorted(set(b) - set(a)),
        "removed": sorted(set(a) - set(b)),
        "changed": changed,
        "unchanged": sum(1 for i in set(a) & set(b)) - len(changed),
    }


def _version(folder: Path) -> str:
    try:
        with open_regular(folder / "manifest.json") as fh:
            version = json.loads(fh.read().decode("utf-8")).get("version", "")
    except (OSError, ValueError, AttributeError, ValidationFailed):
        return ""
    return version if _valid_version(version) else ascii(version)
