"""Authoring one item at a time from uploaded bytes (the annotation UI's path into the item store).

An upload is written to a temporary folder as a one-line JSONL file with its media and handed to
``import_items``, so a browser-authored item passes exactly the validation, media intake and revision
rules of a JSONL import. Also: the "returned to you" inbox an author works from.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from .errors import MediaError, PermissionDenied, Problem, ValidationFailed
from .items import ImportReport, import_items
from .jsonl import validate_line
from .media import inspect_audio, inspect_image
from .notes import item_notes
from .schema import ItemContent
from .tables import Asset, Item, ReviewRecord, SceneGroup
from .workflow import ItemStatus, derive_status
from .workspace import Workspace


@dataclass(frozen=True)
class Upload:
    """A file as a browser sends it: its name (for the extension and the record) and its bytes."""

    name: str
    data: bytes


def _safe_name(name: str, fallback: str) -> str:
    """A plain file name: no folders, only harmless characters (the original name is kept on the asset)."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).name).strip("._")
    return base or fallback


def save_uploaded_item(
    ws: Workspace,
    actor: str,
    fields: dict[str, Any],
    image: Upload | None = None,
    audio: Upload | None = None,
) -> ImportReport:
    """Create or revise one item authored by ACTOR; a missing upload keeps the stored medium.

    ``fields`` is an item line of design.md without ``image``/``audio``; ``author`` is always the actor.
    Problems are reported per field (no temporary file names or line numbers).
    """
    ws.require_role(actor, "author")
    item_id = str(fields.get("id", "")).strip()
    stored: Item | None = None
    if item_id:
        with ws.session() as s:
            stored = s.get(Item, item_id)
    if stored is not None and stored.author != actor:
        raise PermissionDenied(f"{item_id!r} was written by {stored.author}; only its author may edit it")

    with tempfile.TemporaryDirectory(prefix="curate-upload-") as tmp:
        folder = Path(tmp)
        row = {k: v for k, v in fields.items() if k not in ("image", "audio")}
        row["author"] = actor
        problems: list[Problem] = []
        for kind, upload in (("image", image), ("audio", audio)):
            (folder / kind).mkdir()
            if upload is not None:
                name = _safe_name(upload.name, kind)
                (folder / kind / name).write_bytes(upload.data)
                row[kind] = f"{kind}/{name}"
                problems += upload_problems(ws, kind, upload, folder / kind / name)
            elif stored is not None:
                with ws.session() as s:
                    asset = s.get(Asset, getattr(stored, kind))
                assert asset is not None
                name = _safe_name(asset.original_name, kind)
                shutil.copyfile(ws.asset_path(asset), folder / kind / name)
                row[kind] = f"{kind}/{name}"
            else:
                problems.append(Problem(f"upload {'an image' if kind == 'image' else 'an audio'} file", field=kind))
                row[kind] = f"{kind}/missing"  # lets the other fields be checked now, all at once
        if problems:  # the media's problems and the fields', in one report
            parsed = validate_line(ItemContent, row, "", 0)
            if isinstance(parsed, list):
                problems += [
                    Problem(plain(p.message), field=p.field) for p in parsed if p.field not in ("image", "audio")
                ]
            raise ValidationFailed(problems, "the item was not saved")
        path = folder / "item.jsonl"
        path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
        try:
            return import_items(ws, path, actor=actor)
        except ValidationFailed as exc:
            located = [
                Problem(plain(p.message.removeprefix(f"{path}: ").replace(f"{folder}/", "")), field=p.field)
                for p in exc.problems
            ]
            raise ValidationFailed(located, "the item was not saved") from None


_PLAIN = {
    "String should have at least 1 character": "is empty: fill it in",
    "must hold at least 1 character that is not whitespace": "is empty: fill it in",
    "Field required": "is missing: fill it in",
    "Input should be a valid string": "should be text",
}


def plain(message: str) -> str:
    """A validator's message in the words of the form (an author never met pydantic)."""
    return _PLAIN.get(message, message)


def upload_problems(ws: Workspace, kind: str, upload: Upload, path: Path | None = None) -> list[Problem]:
    """What is wrong with one uploaded medium, in words for its author (named as uploaded, no server path).

    ``path`` is where its bytes already lie; without it they are written to a temporary file to be decoded.
    """
    if path is None:
        with tempfile.TemporaryDirectory(prefix="curate-upload-") as tmp:
            staged = Path(tmp) / _safe_name(upload.name, kind)
            staged.write_bytes(upload.data)
            return upload_problems(ws, kind, upload, staged)
    limit = ws.settings.media.max_file_mb
    if not upload.data:
        return [Problem(f"{upload.name}: the file is empty; upload the {kind} again", field=kind)]
    if len(upload.data) > limit * 1024 * 1024:
        return [Problem(f"{upload.name}: the file is larger than {limit:g} MB; upload a smaller {kind}", field=kind)]
    try:
        if kind == "image":
            inspect_image(path, "", ws.settings.media.max_image_pixels, name=upload.name)
        else:
            inspect_audio(path, "", name=upload.name, max_seconds=ws.settings.media.max_audio_seconds)
    except MediaError as exc:
        return [Problem(str(exc), field=kind)]
    return []


def item_fields(ws: Workspace, item_id: str) -> dict[str, Any]:
    """The editable fields of a stored item (an item line without media), to prefill an edit form; ``notes``
    only when it has any."""
    item = ws.item(item_id)
    with ws.session() as s:
        group = s.get(SceneGroup, item.group_id)
    assert group is not None
    notes = item_notes(item.extra)
    return {
        "id": item.id,
        "group": item.group_id,
        "perturbed": group.perturbed,
        "language": item.language,
        "author": item.author,
        "context": item.context,
        "question": item.question,
        "options": dict(item.options),
        "answer": item.answer,
        "taxonomy": dict(item.taxonomy),
        "ambiguous": list(item.ambiguous),
        "provenance": json.loads(json.dumps(item.provenance)),
        **({"notes": notes} if notes else {}),
    }


@dataclass(frozen=True)
class ReviewerNote:
    stage: str
    reviewer: str
    note: str


@dataclass
class ReturnedItem:
    """An item sent back to its author: the stage that failed, the reason codes and reviewers' notes."""

    id: str
    group: str
    stage: str | None
    reasons: list[str]
    notes: list[ReviewerNote] = field(default_factory=list)


def returned_inbox(ws: Workspace, author: str, statuses: list[ItemStatus] | None = None) -> list[ReturnedItem]:
    """Items of AUTHOR in state ``returned``, with the notes reviewers left on their current revision."""
    statuses = derive_status(ws) if statuses is None else statuses
    with ws.session() as s:
        mine = {
            row[0]: (row[1], row[2])
            for row in s.execute(
                select(col(Item.id), col(Item.revision), col(Item.group_id)).where(col(Item.author) == author)
            )
        }
        returned = [st for st in statuses if st.state == "returned" and st.id in mine]
        subjects = {f"item:{st.id}" for st in returned} | {f"group:{st.group}" for st in returned}
        records: Iterable[ReviewRecord] = (
            s.execute(
                select(ReviewRecord).where(col(ReviewRecord.subject).in_(subjects)).order_by(col(ReviewRecord.id))
            ).scalars()
            if subjects
            else []
        )
        notes: dict[str, list[ReviewerNote]] = {}
        for rec in records:
            # a stage's free text is its note, or its reason where the record requires one (a filter drop)
            note = "\n".join(str(rec.payload.get(k) or "").strip() for k in ("reason", "note")).strip()
            current = rec.revision == 0 or rec.revision == mine[rec.subject.removeprefix("item:")][0]
            if note and current:
                notes.setdefault(rec.subject, []).append(ReviewerNote(rec.stage, rec.reviewer, note))
    return [
        ReturnedItem(
            st.id,
            st.group,
            st.stage,
            list(st.reasons),
            notes.get(f"item:{st.id}", []) + notes.get(f"group:{st.group}", []),
        )
        for st in returned
    ]
