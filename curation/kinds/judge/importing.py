# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""What the judge kind's imports share: media inspected once per file and staged, one write transaction
that lands everything or nothing, and every problem of a file named at once."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.audit.intake import Measured, measure_new, store_measured
from curation.errors import MediaError, Problem, ValidationFailed
from curation.jsonl import read_models
from curation.licences import licence_problem
from curation.media import MediaInfo, inspect_audio, inspect_image, safe_media_path, sha256_file
from curation.tables import Asset
from curation.workspace import Workspace, record_event

from .schema import TaskLine


def content_hash(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _inspect(ws: Workspace, path: Path, modality: str) -> MediaInfo:
    sha = sha256_file(path)
    limit = ws.settings.media.max_file_mb * 1e6
    if path.stat().st_size > limit:
        raise MediaError(
            f"{path.name}: exceeds the limit of {ws.settings.media.max_file_mb:g} MB ([media] max_file_mb)"
        )
    if modality == "image":
        return inspect_image(path, sha, ws.settings.media.max_image_pixels)
    if modality == "audio":
        return inspect_audio(path, sha, max_seconds=ws.settings.media.max_audio_seconds)
    from curation.mediatools.video import VIDEO_TYPES, probe_video

    video = probe_video(path, ws.settings.media.max_video_frames, ws.settings.media.max_image_pixels)
    ext = next((e for name, (_, e) in VIDEO_TYPES.items() if name in video.container.split(",")), path.suffix.lower())
    return MediaInfo(
        sha,
        "video",
        video.mime,
        ext,
        video.size_bytes,
        width=video.width,
        height=video.height,
        duration_s=video.duration_s,
    )


@dataclass
class _Media:
    """Media of one import: inspected once per file, staged, and added as assets in the transaction."""

    ws: Workspace
    found: dict[Path, MediaInfo] = field(default_factory=dict)

    def inspect(self, base: Path, relative: str, modality: str) -> tuple[MediaInfo, Path]:
        path = safe_media_path(base, relative)
        info = self.found.get(path) or _inspect(self.ws, path, modality)
        if info.kind != modality:
            raise MediaError(f"{path.name}: is {info.kind}, but the field expects {modality}")
        self.found[path] = info
        return info, path

    def write(self, session, staging) -> None:  # type: ignore[no-untyped-def]
        known = set(session.execute(select(Asset.sha256)).scalars())
        measured: dict[str, Measured] = {}
        for path, info in self.found.items():
            staged = staging.intake(path, info.sha256)  # refused if it changed since
            if info.sha256 not in known and (
                found := measure_new(info.kind, staged.read_bytes(), path.name, self.ws.settings.media)
            ):
                measured[info.sha256] = found  # what the media gate and the audit read, from the stored copy
            staging.keep(staged, info.sha256, info.ext)
            if info.sha256 in known:
                continue
            known.add(info.sha256)
            session.add(Asset(**info.asset_columns(path.name)))
        store_measured(session, measured)


def _transaction(ws: Workspace, media: _Media | None, body: Callable[[Any], None]) -> None:
    """One write transaction with its staged media: everything lands, or nothing does."""
    staging = ws.media.stage()
    try:
        with ws.writing() as session:
            if media is not None:
                media.write(session, staging)
            body(session)
        staging.commit()
    except BaseException:
        staging.discard()
        raise


def _refuse(problems: list[Problem], file: str) -> None:
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; nothing was imported")


@dataclass(frozen=True)
class ImportCounts:
    added: int = 0
    unchanged: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"added": self.added, "unchanged": self.unchanged}

    def summary(self) -> str:
        return f"{self.added} added, {self.unchanged} unchanged"


TaskRows = list[tuple[int, TaskLine, dict[str, str]]]
"""(line number, the line, its media as modality -> content hash) of a file in the task line format."""


def read_task_lines(
    path: Path, media: _Media, *, hold_licences: bool = False, keep: Collection[str] | None = None
) -> TaskRows:
    """The lines of a task-format file (tasks, candidate queries) with their media staged; every problem of the
    file at once, and nothing staged that a later step would keep, when there is any.

    ``hold_licences`` (candidate queries) takes a line whose licence is not open, to be held by name, instead of
    refusing the file; ``keep`` (a seeded draw) stages and returns only the lines of those ids."""
    file, problems = str(path), list[Problem]()
    rows: TaskRows = []
    seen: dict[str, int] = {}
    for number, line in read_models(path, TaskLine, problems):
        if line.id in seen:
            problems.append(Problem(f"duplicate id {line.id!r} (first on line {seen[line.id]})", "id", number, file))
            continue
        seen[line.id] = number
        if keep is not None and line.id not in keep:
            continue
        why = licence_problem(line.license, media.ws.settings.licences.accepted())
        if why and not hold_licences:
            problems.append(Problem(why, "license", number, file))
        inputs = {}
        for modality, relative in line.inputs.media().items():
            try:
                inputs[modality] = media.inspect(path.parent, relative, modality)[0].sha256
            except MediaError as exc:
                problems.append(Problem(str(exc), f"inputs.{modality}", number, file))
        rows.append((number, line, inputs))
    _refuse(problems, file)
    return rows


def store_new_lines(
    session: Any,
    table: Any,
    rows: TaskRows,
    build: Callable[[TaskLine, dict[str, str], str], Any],
    *,
    exclude: set[str],
    noun: str,
    event: str,
    file: str,
    actor: str,
) -> dict[str, int]:
    """Add the rows whose id is new (``build`` makes the table row from the line, its media and content hash);
    the same content again is unchanged, other content under a stored id is refused, every such line at once."""
    stored = {r.id: r.content_hash for r in session.execute(select(table)).scalars()}
    counts, clashes = {"added": 0, "unchanged": 0}, list[Problem]()
    for number, line, inputs in rows:
        data = {**line.model_dump(exclude=exclude), "inputs": inputs}
        digest = content_hash(data)
        if line.id in stored:
            if stored[line.id] != digest:
                clashes.append(Problem(f"{noun} {line.id!r} is already stored with other content", "id", number, file))
            else:
                counts["unchanged"] += 1
            continue
        session.add(build(line, inputs, digest))
        record_event(session, actor, event, f"{table.__tablename__}:{line.id}", None, data)
        counts["added"] += 1
    _refuse(clashes, file)
    return counts
