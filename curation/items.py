"""Importing and exporting items: validation, revisions and the round trip (each medium a line names is read by
``curation.item_media``; a file of story transitions is imported by ``curation.screening.items``)."""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import stat
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from .audio_production.gates import refresh_audio_gates
from .audit.intake import Measured, store_measured
from .bulk import collector_paused
from .db import insert_rows
from .errors import MediaError, Problem, ValidationFailed, WorkspaceError
from .exposure import reveal
from .import_report import ImportReport
from .item_content import CONTENT_FIELDS, canonical_content, content_hash, item_content
from .item_media import MediaCache
from .jsonl import read_jsonl, validate_line, write_jsonl
from .licences import licence_problem
from .media import MediaInfo, MediaPaths, Staging, sha256_file
from .notes import notes_extra
from .schema import ItemContent
from .screening.items import import_story_items
from .tables import Asset, Event, Item, ItemRevision, Person, SceneGroup, utcnow
from .workspace import Workspace, event_row

__all__ = [  # the canonical content moved to curation.item_content; these names stay importable from here
    "CONTENT_FIELDS",
    "ImportReport",  # in curation.import_report, which the story importer shares
    "canonical_content",
    "content_hash",
    "export_items",
    "import_items",
    "item_content",
]

BATCH = 500
"""Ids per ``IN (...)`` query: well under every database's limit on bound parameters."""
STORY_KIND = "story_transition"
"""Items of this kind are exported as their transition and imported by ``curation.screening.items``."""


@dataclass
class _Line:
    number: int
    content: ItemContent
    media: dict[str, tuple[MediaInfo, Path]]
    """Per medium the item has (image, audio): what it is and where it was read."""

    def sha(self, kind: str) -> str | None:
        found = self.media.get(kind)
        return found[0].sha256 if found else None


def import_items(
    ws: Workspace, path: Path, actor: str = "cli", progress: Callable[[int, int], None] | None = None
) -> ImportReport:
    """Validate every line, then import all items in one transaction, or nothing.

    ``progress(done, total)`` follows the reading of the media files (hashing, copying, decoding: an import's
    long step), which a large import does in worker processes.

    A file of story transitions (``"kind": "story_transition"``, as ``export items`` writes them) is imported
    by the story kind; story transitions and other items go in separate files.
    """
    story = (
        [(n, o.get("kind") == STORY_KIND) for n, o in read_jsonl(path) if isinstance(o, dict)]
        if _may_name_a_kind(path)
        else []
    )
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
        return import_story_items(ws, path, actor)
    ws.recover_media()
    staging = ws.media.stage()
    try:
        with collector_paused():
            report = _import(ws, path, staging, actor, progress)
        staging.commit()
    except BaseException:
        staging.discard()
        raise
    refresh_audio_gates(ws)  # what `curate status` shows of consent, takes and recording controls
    return report


def _may_name_a_kind(path: Path) -> bool:
    """Whether any line could carry a ``"kind"`` (a story transition file): a file without the word needs no
    parse of its own before the import's (a tenth of a large import's time)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO or a device is not waited on, nor read
    except OSError:
        return True  # the import reports why it cannot be read
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return b'"kind"' in fh.read()
    except OSError:
        return True
    finally:
        os.close(fd)


_Read = tuple[int, list[Problem], ItemContent | None, list[tuple[str, Path | MediaError]]]
"""One line as read: its number, its problems so far, and its item with each medium's path (or the problem
with that path), or None."""


def _import(
    ws: Workspace, path: Path, staging: Staging, actor: str, progress: Callable[[int, int], None] | None
) -> ImportReport:
    file = str(path)
    with ws.session() as s:
        known_assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
    with MediaCache(ws, known_assets, staging, progress) as media:
        read = _read_lines(path, media, ws.settings.licences.accepted())
        media.read_all()

    problems: list[Problem] = []
    lines: list[_Line] = []
    for number, found, content, wanted in read:
        problems.extend(found)
        if content is None:
            continue
        infos: dict[str, tuple[MediaInfo, Path]] = {}
        for kind, media_path in wanted:
            try:
                if isinstance(media_path, MediaError):
                    raise media_path
                infos[kind] = (media.info(media_path, kind), media_path)
            except MediaError as exc:
                problems.append(Problem(str(exc), kind, number, file))
        if len(infos) == len(wanted):
            lines.append(_Line(number, content, infos))

    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; nothing was imported")

    report = ImportReport(measuring_deferred=media.deferred)
    with ws.writing() as s:
        _check_against_store(s, lines, file)
        _write(s, lines, report, actor, file, media.measured)
    return report


def _read_lines(path: Path, media: MediaCache, licences: list[str]) -> list[_Read]:
    """Parse and validate every line, handing each medium to ``media`` as soon as a line names it; a medium's
    ``provenance`` licence must be one of ``licences`` (``curation.licences``)."""
    file = str(path)
    paths = MediaPaths(path.parent)
    resolved: dict[str, Path | MediaError] = {}  # sisters name the same files
    read: list[_Read] = []
    seen_ids: dict[str, int] = {}
    group_perturbed: dict[str, tuple[str, int]] = {}
    for number, obj in read_jsonl(path):
        if isinstance(obj, Problem):
            read.append((number, [obj], None, []))
            continue
        found: list[Problem] = []
        raw_id, raw_group, raw_perturbed = obj.get("id"), obj.get("group"), obj.get("perturbed")
        if isinstance(raw_id, str):
            if raw_id in seen_ids:
                found.append(Problem(f"duplicate id {raw_id!r} (first on line {seen_ids[raw_id]})", "id", number, file))
                read.append((number, found, None, []))
                continue
            seen_ids[raw_id] = number
        if isinstance(raw_group, str) and isinstance(raw_perturbed, str):
            first = group_perturbed.setdefault(raw_group, (raw_perturbed, number))
            if first[0] != raw_perturbed:
                found.append(
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
            read.append((number, found + parsed, None, []))
            continue
        assert isinstance(parsed, ItemContent)
        for kind in ("image", "audio"):
            given = getattr(parsed.provenance, kind)
            if given is not None and (why := licence_problem(given.license, licences)):
                found.append(Problem(why, f"provenance.{kind}.license", number, file))
        wanted: list[tuple[str, Path | MediaError]] = []
        for kind in ("image", "audio"):
            if kind in parsed.modalities:
                relative = getattr(parsed, kind)
                media_path = resolved.get(relative)
                if media_path is None:
                    try:
                        media_path = paths.resolve(relative)
                    except MediaError as exc:
                        media_path = exc
                    resolved[relative] = media_path
                if not isinstance(media_path, MediaError):
                    media.want(media_path, kind)
                wanted.append((kind, media_path))
        read.append((number, found, parsed, wanted))
    return read


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


def _write(  # type: ignore[no-untyped-def]
    s, lines: list[_Line], report: ImportReport, actor: str, file: str, measured: dict[tuple[Path, str], Measured]
) -> None:
    """Store the lines' new media rows (with their facts and audit signatures), groups, items, revisions and
    events: each table in one bulk INSERT (new rows, in line order, as one by one), revised items updated in the
    session."""
    existing = {row[0]: row for row in s.execute(select(col(Item.id), col(Item.content_hash), col(Item.revision)))}
    groups = set(s.execute(select(col(SceneGroup.id))).scalars())
    assets = set(s.execute(select(col(Asset.sha256))).scalars())
    now = utcnow()
    new_assets: list[dict[str, Any]] = []
    new_groups: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    new_measured: dict[str, Measured] = {}
    for line in lines:
        for kind, (info, src) in line.media.items():
            if info.sha256 not in assets:
                new_assets.append(
                    dict(
                        **info.asset_columns(src.name),
                        provenance=line.content.provenance.model_dump(mode="json")[kind],
                        derived_from=None,
                        transform=None,
                        created_at=now,
                    )
                )
                assets.add(info.sha256)
                report.new_media += 1
                if (found := measured.get((src, kind))) is not None:
                    new_measured[info.sha256] = found
        c = line.content
        if c.group not in groups:
            new_groups.append(dict(id=c.group, perturbed=c.perturbed, created_at=now))
            events.append(event_row(actor, "group.created", f"group:{c.group}", None, {"perturbed": c.perturbed}))
            groups.add(c.group)
    insert_rows(s, Asset, new_assets)
    store_measured(s, new_measured)
    insert_rows(s, SceneGroup, new_groups)
    changed: list[tuple[_Line, dict[str, Any], str, dict[str, Any]]] = []
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
            extra=notes_extra(canonical.get("notes")),
            content_hash=digest,
            updated_at=now,
        )
        changed.append((line, canonical, digest, fields))
    revised = _stored_items(s, [line.content.id for line, *_ in changed if line.content.id in existing])
    new_items: list[dict[str, Any]] = []
    revisions: list[dict[str, Any]] = []
    source = Path(file).name
    for line, canonical, digest, fields in changed:
        c = line.content
        if c.id not in revised:
            new_items.append(dict(id=c.id, revision=1, created_at=now, **fields))
            revision = 1
            report.created.append(c.id)
            before = None
        else:
            item, before = revised[c.id]
            revision = item.revision + 1
            for key, value in fields.items():
                setattr(item, key, value)
            item.revision = revision
            report.revised.append(c.id)
        revisions.append(
            dict(
                item_id=c.id,
                revision=revision,
                content=canonical,
                content_hash=digest,
                created_by=actor,
                created_at=now,
            )
        )
        old_values, new_values = _changed(before, canonical) if before else (None, {})
        events.append(
            event_row(
                actor,
                "item.created" if before is None else "item.revised",
                f"item:{c.id}",
                old_values,
                {"revision": revision, "source": source, **new_values},
            )
        )
    s.flush()
    insert_rows(s, Item, new_items)
    insert_rows(s, ItemRevision, revisions)
    insert_rows(s, Event, events)


def _stored_items(s, ids: list[str]) -> dict[str, tuple[Item, dict[str, Any] | None]]:  # type: ignore[no-untyped-def]
    """The stored items of these ids, each with its current revision's content (None if that row is lost)."""
    found: dict[str, tuple[Item, dict[str, Any] | None]] = {}
    for i in range(0, len(ids), BATCH):
        chunk = ids[i : i + BATCH]
        items = {item.id: item for item in s.execute(select(Item).where(col(Item.id).in_(chunk))).scalars()}
        contents = dict(
            s.execute(
                select(col(ItemRevision.item_id), col(ItemRevision.content))
                .join(Item, (col(Item.id) == col(ItemRevision.item_id)) & (col(Item.revision) == ItemRevision.revision))
                .where(col(Item.id).in_(chunk))
            ).all()
        )
        found.update((key, (item, contents.get(key))) for key, item in items.items())
    return found


def _changed(before: dict[str, Any], after: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    keys = [k for k in after if before.get(k) != after[k]]
    return {k: before.get(k) for k in keys}, {k: after[k] for k in keys}


def export_items(ws: Workspace, path: Path, media_dir: str = "media", reader: str | None = None) -> int:
    """Write every item as JSONL with its media copied beside it; importing it gives the same items.

    PATH is the JSONL file (a name ending in ``.jsonl``), or a folder to write ``items.jsonl`` into, created
    when missing; nothing is written outside PATH's folder.
    With ``reader``, that person is recorded as shown every exported label *before* any label reaches the disk,
    so that a kill between the two can never leave labels read by someone the workspace thinks blind.
    A media file already in the export folder is kept only when its content hash is the asset's.
    """
    path = path.resolve()
    if path.is_dir() or (not path.exists() and path.suffix.lower() != ".jsonl"):
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
