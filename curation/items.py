"""Importing and exporting items: validation, media intake, revisions and the round trip."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from .errors import MediaError, Problem, ValidationFailed, WorkspaceError
from .jsonl import read_jsonl, validate_line, write_jsonl
from .media import MediaInfo, Staging, inspect_audio, inspect_image, safe_media_path, sha256_file
from .schema import ItemContent
from .tables import Asset, Item, ItemRevision, Person, SceneGroup, utcnow
from .vocab import MODALITIES
from .workspace import Workspace, record_event

STORY_KIND = "story_transition"
"""Items of this kind are exported as their transition and imported by ``curation.screening.items``."""

CONTENT_FIELDS = (
    "id",
    "group",
    "perturbed",
    "language",
    "author",
    "context",
    "image",
    "audio",
    "question",
    "options",
    "answer",
    "taxonomy",
    "ambiguous",
    "provenance",
)


def canonical_content(content: ItemContent, image_sha: str | None, audio_sha: str | None) -> dict[str, Any]:
    """The stored form of an item: media replaced by content hashes, keys in a fixed order.

    A TRIAD item (all three modalities) keeps exactly the fields of ``CONTENT_FIELDS``; an item over another
    modality set also records ``modalities`` and has no field of a modality it lacks.
    """
    data = content.model_dump(mode="json")
    data["image"] = image_sha
    data["audio"] = audio_sha
    if content.has_default_modalities:
        return {k: data[k] for k in CONTENT_FIELDS}
    for nested in ("taxonomy", "provenance"):
        data[nested] = {k: v for k, v in data[nested].items() if v is not None}
    fields = ("id", "group", "kind", "modalities", *CONTENT_FIELDS[2:])
    return {k: data[k] for k in fields if data.get(k) is not None}


def content_hash(canonical: dict[str, Any]) -> str:
    blob = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def item_content(item: Item, perturbed: str) -> dict[str, Any]:
    """The canonical content of a stored item (same shape as ``canonical_content``)."""
    if item.modalities and tuple(item.modalities) != MODALITIES:
        has = item.modalities
        own = {
            "id": item.id,
            "group": item.group_id,
            "kind": item.kind,
            "modalities": list(has),
            "perturbed": perturbed,
            "language": item.language,
            "author": item.author,
            "context": item.context if "text" in has else None,
            "image": item.image,
            "audio": item.audio,
            "question": item.question,
            "options": item.options,
            "answer": item.answer,
            "taxonomy": item.taxonomy,
            "ambiguous": item.ambiguous,
            "provenance": item.provenance,
        }
        return {k: v for k, v in own.items() if v is not None}
    return {
        "id": item.id,
        "group": item.group_id,
        "perturbed": perturbed,
        "language": item.language,
        "author": item.author,
        "context": item.context,
        "image": item.image,
        "audio": item.audio,
        "question": item.question,
        "options": item.options,
        "answer": item.answer,
        "taxonomy": item.taxonomy,
        "ambiguous": item.ambiguous,
        "provenance": item.provenance,
    }


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    revised: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    new_media: int = 0

    def summary(self) -> str:
        return (
            f"{len(self.created)} created, {len(self.revised)} revised, {len(self.unchanged)} unchanged, "
            f"{self.new_media} new media file(s)"
        )


@dataclass
class _Line:
    number: int
    content: ItemContent
    media: dict[str, tuple[MediaInfo, Path]]
    """Per medium the item has (image, audio): what it is and where it was read."""

    def sha(self, kind: str) -> str | None:
        found = self.media.get(kind)
        return found[0].sha256 if found else None


class _MediaCache:
    """Hash and decode each distinct file once per import (sisters share media).

    A file the store lacks is copied into the import's staging folder at once, hashing the copy, and decoded
    from that private copy: what is validated is exactly what is stored, whatever happens to the source.
    """

    def __init__(self, ws: Workspace, known: dict[str, Asset], staging: Staging) -> None:
        self.ws = ws
        self.known = known
        self.staging = staging
        self.by_path: dict[Path, MediaInfo] = {}

    def inspect(self, path: Path, kind: str) -> MediaInfo:
        if path in self.by_path:
            info = self.by_path[path]
        else:
            sha = sha256_file(path)
            asset = self.known.get(sha)
            if asset is not None:
                if not self.ws.media.has(sha, asset.ext):  # the store lost its copy: this import restores it
                    self.staging.keep(self.staging.intake(path, sha), sha, asset.ext)
                info = MediaInfo(
                    sha,
                    asset.kind,
                    asset.mime,
                    asset.ext,
                    asset.size_bytes,
                    asset.width,
                    asset.height,
                    asset.duration_s,
                    asset.sample_rate,
                    asset.channels,
                )
            else:
                max_bytes = self.ws.settings.media.max_file_mb * 1024 * 1024
                size = path.stat().st_size
                if size == 0:
                    raise MediaError(f"{path.name}: file is empty")
                if size > max_bytes:
                    raise MediaError(
                        f"{path.name}: {size / 1e6:.1f} MB exceeds the limit of "
                        f"{self.ws.settings.media.max_file_mb:g} MB ([media] max_file_mb)"
                    )
                staged = self.staging.intake(path, sha)
                if kind == "image":
                    info = inspect_image(staged, sha, self.ws.settings.media.max_image_pixels, name=path.name)
                else:
                    info = inspect_audio(staged, sha, name=path.name)
                self.staging.keep(staged, sha, info.ext)
            self.by_path[path] = info
        if info.kind != kind:
            raise MediaError(f"{path.name}: is {info.kind}, but the field expects {kind}")
        return info


def import_items(ws: Workspace, path: Path, actor: str = "cli") -> ImportReport:
    """Validate every line, then import all items in one transaction, or nothing.

    A file of story transitions (``"kind": "story_transition"``, as ``export items`` writes them) is imported
    by the story kind; story transitions and other items go in separate files.
    """
    story = [(n, o.get("kind") == STORY_KIND) for n, o in read_jsonl(path) if isinstance(o, dict)]
    if any(is_story for _, is_story in story):
        if not all(is_story for _, is_story in story):
            first = next(n for n, is_story in story if is_story)
            other = next(n for n, is_story in story if not is_story)
            raise ValidationFailed(
                [
                    Problem(
                        f"a story transition (line {first}) and another kind of item (line {other}) in one file: "
                        "import them from separate files",
                        "kind",
                        other,
                        str(path),
                    )
                ],
                "nothing was imported",
            )
        from .screening.items import import_story_items

        return import_story_items(ws, path, actor)
    ws.recover_media()
    staging = ws.media.stage()
    try:
        report = _import(ws, path, staging, actor)
        staging.commit()
    except BaseException:
        staging.discard()
        raise
    return report


def _import(ws: Workspace, path: Path, staging: Staging, actor: str) -> ImportReport:
    file = str(path)
    base = path.parent
    problems: list[Problem] = []
    lines: list[_Line] = []
    seen_ids: dict[str, int] = {}
    group_perturbed: dict[str, tuple[str, int]] = {}

    with ws.session() as s:
        known_assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
    media = _MediaCache(ws, known_assets, staging)

    for number, obj in read_jsonl(path):
        if isinstance(obj, Problem):
            problems.append(obj)
            continue
        raw_id, raw_group, raw_perturbed = obj.get("id"), obj.get("group"), obj.get("perturbed")
        if isinstance(raw_id, str):
            if raw_id in seen_ids:
                problems.append(
                    Problem(f"duplicate id {raw_id!r} (first on line {seen_ids[raw_id]})", "id", number, file)
                )
                continue
            seen_ids[raw_id] = number
        if isinstance(raw_group, str) and isinstance(raw_perturbed, str):
            first = group_perturbed.setdefault(raw_group, (raw_perturbed, number))
            if first[0] != raw_perturbed:
                problems.append(
                    Problem(
                        f"group {raw_group!r} is {first[0]!r}-perturbed on line {first[1]}, "
                        f"but {raw_perturbed!r} here: sisters must agree",
                        "perturbed",
                        number,
                        file,
                    )
                )
        parsed = validate_line(ItemContent, obj, file, number)
        if isinstance(parsed, list):
            problems.extend(parsed)
            continue
        assert isinstance(parsed, ItemContent)
        content = parsed
        infos: dict[str, tuple[MediaInfo, Path]] = {}
        wanted = [kind for kind in ("image", "audio") if kind in content.modalities]
        for kind in wanted:
            try:
                media_path = safe_media_path(base, getattr(content, kind))
                infos[kind] = (media.inspect(media_path, kind), media_path)
            except MediaError as exc:
                problems.append(Problem(str(exc), kind, number, file))
        if len(infos) == len(wanted):
            lines.append(_Line(number, content, infos))

    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; nothing was imported")

    report = ImportReport()
    with ws.writing() as s:
        _check_against_store(s, lines, file)
        _write(s, lines, report, actor, file)
    return report


def _check_against_store(s, lines: list[_Line], file: str) -> None:  # type: ignore[no-untyped-def]
    problems: list[Problem] = []
    people = {p.name: p for p in s.execute(select(Person)).scalars()}
    groups = {g.id: g.perturbed for g in s.execute(select(SceneGroup)).scalars()}
    for line in lines:
        c = line.content
        person = people.get(c.author)
        if person is None:
            problems.append(
                Problem(
                    f"unknown author {c.author!r}; add them with `curate people add {c.author} --role author`",
                    "author",
                    line.number,
                    file,
                )
            )
        elif "author" not in person.role_set:
            problems.append(Problem(f"{c.author!r} does not have the author role", "author", line.number, file))
        stored = groups.get(c.group)
        if stored is not None and stored != c.perturbed:
            problems.append(
                Problem(
                    f"group {c.group!r} is {stored!r}-perturbed in the workspace, not {c.perturbed!r}",
                    "perturbed",
                    line.number,
                    file,
                )
            )
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; nothing was imported")


def _write(s, lines: list[_Line], report: ImportReport, actor: str, file: str) -> None:  # type: ignore[no-untyped-def]
    existing = {row[0]: row for row in s.execute(select(col(Item.id), col(Item.content_hash), col(Item.revision)))}
    groups = set(s.execute(select(col(SceneGroup.id))).scalars())
    assets = set(s.execute(select(col(Asset.sha256))).scalars())
    now = utcnow()
    for line in lines:
        for kind, (info, src) in line.media.items():
            if info.sha256 not in assets:
                s.add(
                    Asset(
                        sha256=info.sha256,
                        kind=info.kind,
                        mime=info.mime,
                        ext=info.ext,
                        size_bytes=info.size_bytes,
                        width=info.width,
                        height=info.height,
                        duration_s=info.duration_s,
                        sample_rate=info.sample_rate,
                        channels=info.channels,
                        original_name=src.name,
                        provenance=line.content.provenance.model_dump(mode="json")[kind],
                    )
                )
                assets.add(info.sha256)
                report.new_media += 1
        c = line.content
        if c.group not in groups:
            s.add(SceneGroup(id=c.group, perturbed=c.perturbed))
            record_event(s, actor, "group.created", f"group:{c.group}", None, {"perturbed": c.perturbed})
            groups.add(c.group)
    s.flush()
    for line in lines:
        c = line.content
        canonical = canonical_content(c, line.sha("image"), line.sha("audio"))
        digest = content_hash(canonical)
        prior = existing.get(c.id)
        if prior is not None and prior[1] == digest:
            report.unchanged.append(c.id)
            continue
        fields = dict(
            group_id=c.group,
            kind=c.kind,
            modalities=None if c.has_default_modalities else list(c.modalities),
            author=c.author,
            language=c.language,
            context=c.context or "",
            question=c.question,
            options=canonical["options"],
            answer=c.answer,
            taxonomy=canonical["taxonomy"],
            ambiguous=canonical["ambiguous"],
            image=line.sha("image"),
            audio=line.sha("audio"),
            provenance=canonical.get("provenance", {}),
            content_hash=digest,
            updated_at=now,
        )
        if prior is None:
            item = Item(id=c.id, revision=1, created_at=now, **fields)
            s.add(item)
            revision = 1
            report.created.append(c.id)
            before = None
        else:
            item = s.get(Item, c.id)
            old = s.get(ItemRevision, (c.id, item.revision))
            before = old.content if old else None
            revision = item.revision + 1
            for key, value in fields.items():
                setattr(item, key, value)
            item.revision = revision
            s.add(item)
            report.revised.append(c.id)
        s.flush()
        s.add(
            ItemRevision(
                item_id=c.id,
                revision=revision,
                content=canonical,
                content_hash=digest,
                created_by=actor,
                created_at=now,
            )
        )
        old_values, new_values = _changed(before, canonical) if before else (None, {})
        record_event(
            s,
            actor,
            "item.created" if before is None else "item.revised",
            f"item:{c.id}",
            old_values,
            {"revision": revision, "source": Path(file).name, **new_values},
        )


def _changed(before: dict[str, Any], after: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    keys = [k for k in after if before.get(k) != after[k]]
    return {k: before.get(k) for k in keys}, {k: after[k] for k in keys}


def export_items(ws: Workspace, path: Path, media_dir: str = "media", reader: str | None = None) -> int:
    """Write every item as JSONL with its media copied beside it; importing it gives the same items.

    PATH is the JSONL file, or a folder to write ``items.jsonl`` into; nothing is written outside PATH's folder.
    With ``reader``, that person is recorded as shown every exported label *before* any label reaches the disk,
    so that a kill between the two can never leave labels read by someone the workspace thinks blind.
    A media file already in the export folder is kept only when its content hash is the asset's.
    """
    path = path.resolve()
    if path.is_dir():
        path = path / "items.jsonl"
    media_path = Path(media_dir)
    if not media_dir or media_path.is_absolute() or ".." in media_path.parts or media_path.parts[0] == ".":
        raise ValidationFailed(
            [Problem(f"{media_dir!r} must be a folder name inside the export's folder (e.g. media)", "--media-dir")]
        )
    out_media = path.parent / media_path
    with ws.session() as s:
        items = list(s.execute(select(Item).order_by(Item.group_id, Item.id)).scalars())
        groups = {g.id: g.perturbed for g in s.execute(select(SceneGroup)).scalars()}
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
    if reader is not None:
        from .exposure import reveal

        ws.person(reader)  # an unknown name is refused before anything is written
        reveal(ws, reader, [item.id for item in items], f"export items {path}")
    rows = []
    temp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")

    def exported(sha: str) -> str:
        asset = assets[sha]
        name = f"{asset.sha256}{asset.ext}"
        target = out_media / name
        if target.is_symlink() or not target.is_file() or sha256_file(target) != asset.sha256:
            staged = target.with_name(f".{name}.tmp-{uuid.uuid4().hex[:8]}")
            shutil.copyfile(ws.asset_path(asset), staged)
            os.replace(staged, target)  # a stale or tampered file (same size or not) is replaced whole
        return f"{media_path.as_posix()}/{name}"

    try:
        out_media.mkdir(parents=True, exist_ok=True)
        for item in items:
            if item.kind == STORY_KIND:  # the transition as stored: pages, annotation, proposals, revisers
                row = copy.deepcopy(dict(item.extra))
                for side in ("current", "next"):
                    row[side]["image"] = exported(row[side]["image"])
                rows.append(row)
                continue
            row = item_content(item, groups[item.group_id])
            for kind in ("image", "audio"):
                if kind in row:
                    row[kind] = exported(row[kind])
            rows.append(row)
        write_jsonl(temp, rows)
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
        where = exc.filename or path
        raise WorkspaceError(
            f"cannot write the export to {where} ({exc.strerror or exc}); choose a folder you can write to"
        ) from exc
    return len(rows)
