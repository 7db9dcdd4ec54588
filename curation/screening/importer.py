"""``curate import candidates``: tens of thousands of transitions in minutes, resumably.

The whole file is validated first (every problem reported as FILE:LINE: field: problem, nothing written);
then rows go in batches, each its own transaction. An interrupted import keeps its finished batches, and a
re-run skips every line already stored unchanged, so running it again completes it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError
from sqlalchemy import insert, select, update
from sqlmodel import col

from curation.config import MediaSettings
from curation.errors import MediaError, Problem, ValidationFailed
from curation.jsonl import parse_line, pydantic_problems, read_lines
from curation.licences import licence_problem
from curation.media import MediaPaths, open_image
from curation.workspace import Workspace, record_event

from .schema import CandidateLine
from .tables import Candidate

BATCH_ROWS = 5000


@dataclass
class CandidateImport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    batches: int = 0
    updated_ids: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.created} candidates created, {self.updated} updated, {self.unchanged} unchanged "
            f"({self.batches} batch(es) written)"
        )


def line_hash(line: CandidateLine) -> str:
    blob = orjson.dumps(line.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()


class _MediaPaths:
    """Resolves media paths against the JSONL's folder, checking each distinct path once; like ``import items``
    (``safe_media_path``), a path that leaves the folder, through '..' or a symlink, is refused. With ``media``
    settings, each image is also held to their limits from its header alone (bytes, then pixels: a decompression
    bomb is refused here, so that no screening step ever decodes one)."""

    def __init__(self, base: Path, media: MediaSettings | None = None) -> None:
        self.base = base
        self.paths = MediaPaths(base)
        self.media = media
        self._seen: dict[str, tuple[str | None, str]] = {}

    def resolve(self, relative: str) -> tuple[str | None, str]:
        if relative not in self._seen:
            posix = relative.replace("\\", "/")
            try:
                found = self.paths.resolve(posix)
                if self.media is not None:
                    _within_limits(found, posix, self.media)
                self._seen[relative] = (str(found), "")
            except MediaError as exc:
                self._seen[relative] = (None, str(exc).removeprefix(f"{posix}: "))
        return self._seen[relative]


def _within_limits(path: Path, name: str, media: MediaSettings) -> None:
    """Refuse an image over ``[media]`` max_file_mb or max_image_pixels, reading its header only."""
    size = path.stat().st_size
    if size > media.max_file_mb * 1024 * 1024:
        raise MediaError(
            f"{name}: {size / 1e6:,.1f} MB exceeds the limit of {media.max_file_mb:g} MB ([media] max_file_mb)"
        )
    open_image(path, name, media.max_image_pixels).close()


def _row(line: CandidateLine, digest: str, current: str, nxt: str) -> dict[str, Any]:
    return {
        "id": line.id,
        "book": line.book,
        "page": line.page,
        "title": line.title,
        "collection": line.source.collection,
        "license": line.source.license,
        "source_url": line.source.url,
        "current_text": line.current.text,
        "next_text": line.next.text,
        "current_image": current,
        "next_image": nxt,
        "speech_lines": line.speech_lines,
        "annotations": {k: v.model_dump(mode="json") for k, v in line.annotations.items()} or None,
        "origin": line.origin.model_dump(mode="json") if line.origin else None,
        "line_hash": digest,
    }


def read_candidates(
    path: Path, media_settings: MediaSettings | None = None, licences: list[str] | None = None
) -> list[dict[str, Any]]:
    """Every line validated into a row; all problems raised together, nothing returned half. With
    ``media_settings``, every image is held to its limits; with ``licences``, every ``source.license`` must be
    one of them (``curation.licences``)."""
    file = str(path)
    media = _MediaPaths(path.parent, media_settings)
    problems: list[Problem] = []
    rows: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    refused: dict[str, str | None] = {}  # each licence judged once: a corpus names a few on every line
    for number, raw in read_lines(path):  # the shared reader's rules: bounded lines, UTF-8, NUL, text limit
        obj = raw if isinstance(raw, Problem) else parse_line(raw, file, number, orjson.loads)
        if obj is None:
            continue
        if isinstance(obj, Problem):
            problems.append(obj)
            continue
        try:
            line = CandidateLine.model_validate(obj)
        except ValidationError as exc:
            problems.extend(pydantic_problems(exc, file, number))
            continue
        if line.id in first_line:
            problems.append(Problem(f"id {line.id!r} already given on line {first_line[line.id]}", "id", number, file))
            continue
        first_line[line.id] = number
        if licences is not None:
            licence = line.source.license
            if licence not in refused:
                refused[licence] = licence_problem(licence, licences)
            if why := refused[licence]:
                problems.append(Problem(why, "source.license", number, file))
        resolved = []
        for side in ("current", "next"):
            found, why = media.resolve(getattr(line, side).image)
            if found is None:
                problems.append(Problem(f"{getattr(line, side).image}: {why}", f"{side}.image", number, file))
            resolved.append(found)
        if None not in resolved and not problems:
            rows.append(_row(line, line_hash(line), resolved[0], resolved[1]))  # type: ignore[arg-type]
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; nothing was imported")
    return rows


def import_candidates(ws: Workspace, path: Path, actor: str = "cli", batch_rows: int = BATCH_ROWS) -> CandidateImport:
    """Validate the whole file, then store new and changed candidates batch by batch."""
    rows = read_candidates(path, ws.settings.media, ws.settings.licences.accepted())
    with ws.session() as s:
        stored = dict(s.execute(select(col(Candidate.id), col(Candidate.line_hash))).all())
    report = CandidateImport()
    pending: list[tuple[str, dict[str, Any]]] = []
    for row in rows:
        known = stored.get(row["id"])
        if known == row["line_hash"]:
            report.unchanged += 1
        else:
            pending.append(("update" if known else "create", row))
    for start in range(0, len(pending), batch_rows):
        batch = pending[start : start + batch_rows]
        created = [row for action, row in batch if action == "create"]
        changed = [row for action, row in batch if action == "update"]
        with ws.writing() as s:
            if created:
                s.execute(insert(Candidate), created)
            for row in changed:
                s.execute(update(Candidate).where(col(Candidate.id) == row["id"]).values(**row))
            record_event(
                s,
                actor,
                "import_candidates",
                f"candidates:{path.name}",
                None,
                {"created": len(created), "updated": [r["id"] for r in changed][:100], "updated_count": len(changed)},
            )
        report.created += len(created)
        report.updated += len(changed)
        report.updated_ids.extend(r["id"] for r in changed)
        report.batches += 1
    return report
