"""Recording audio production: speakers' consent, takes (imported or uploaded), the producer's choice and the
spot checks. Every write stores all of its input or nothing, then refreshes the audio gates (``gates``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints
from sqlalchemy import select
from sqlmodel import col

from ..errors import MediaError, NotFoundError, PermissionDenied, Problem, ValidationFailed
from ..jsonl import read_models
from ..media import MediaInfo, inspect_audio, safe_media_path, sha256_file
from ..schema import Identifier, NonEmpty, Note
from ..tables import Asset, Item
from ..workspace import Workspace, record_event
from .credits import credits_of, listener_refusal
from .gates import refresh_audio_gates
from .spot_check import spot_check_sample
from .tables import AudioTake, Consent, SpotCheck, TakeChoice


def _reference(value: str) -> str:
    if not value or value.isspace():
        raise ValueError("name where the signed document is kept (a path, an archive id, a URL)")
    if value.startswith("data:") or "\n" in value:
        raise ValueError("a reference to the signed document, never the document itself")
    return value


Reference = Annotated[str, StringConstraints(max_length=2000), AfterValidator(_reference)]
"""Where a signed document is kept: one line of at most 2,000 characters, never the document's bytes."""


class ConsentIn(BaseModel):
    """One speaker's consent, as ``curate audio consent`` takes it."""

    model_config = ConfigDict(extra="forbid")
    speaker: Identifier
    scope: Annotated[NonEmpty, StringConstraints(max_length=2000)]
    signed_on: date
    document: Reference
    withdrawn: bool = False


class TakeLine(BaseModel):
    """One line of a takes file: ``{"item": ID, "take": NAME, "audio": PATH}`` (the path relative to the file)."""

    model_config = ConfigDict(extra="forbid")
    item: Identifier
    take: Identifier
    audio: NonEmpty


Verdict = Literal["consistent", "inconsistent"]


def record_consent(ws: Workspace, given: ConsentIn, actor: str = "cli") -> Consent:
    """Store a speaker's consent (or its withdrawal); the speaker must be a person with the speaker role."""
    ws.require_role(given.speaker, "speaker")
    with ws.writing() as s:
        row = Consent(**given.model_dump(), recorded_by=actor)
        s.add(row)
        s.flush()
        record_event(s, actor, "consent.recorded", f"person:{given.speaker}", None, given.model_dump(mode="json"))
        s.expunge(row)
    refresh_audio_gates(ws)
    return row


@dataclass(frozen=True)
class TakesReport:
    added: int
    unchanged: int


def _audio_item(s, item_id: str) -> Item | None:  # type: ignore[no-untyped-def]
    item = s.get(Item, item_id)
    return item if item is not None and item.audio else None


def import_takes(ws: Workspace, path: Path, actor: str = "cli") -> TakesReport:
    """Import a takes file: each line one take of an item's audio; the whole file or nothing."""
    file, problems = str(path), list[Problem]()
    found: list[tuple[int, TakeLine, Path, MediaInfo]] = []
    with ws.session() as s:
        stored = {(t.item_id, t.take): t.sha256 for t in s.execute(select(AudioTake)).scalars()}
        seen: dict[tuple[str, str], int] = {}
        for number, line in read_models(path, TakeLine, problems):
            if _audio_item(s, line.item) is None:
                problems.append(Problem(f"no item {line.item!r} with audio in this workspace", "item", number, file))
                continue
            key = (line.item, line.take)
            if key in seen:
                problems.append(
                    Problem(f"take {line.take!r} of {line.item!r} again (line {seen[key]})", "take", number, file)
                )
                continue
            seen[key] = number
            try:
                source = safe_media_path(path.parent, line.audio)
                info = inspect_audio(source, sha256_file(source), max_seconds=ws.settings.media.max_audio_seconds)
            except (MediaError, OSError) as exc:
                problems.append(Problem(str(exc), "audio", number, file))
                continue
            if stored.get(key, info.sha256) != info.sha256:
                problems.append(
                    Problem(
                        f"take {line.take!r} of {line.item!r} is stored with other audio; name a new take",
                        "take",
                        number,
                        file,
                    )
                )
                continue
            found.append((number, line, source, info))
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; nothing was imported")
    added = _store_takes(ws, [(line.item, line.take, source, info) for _, line, source, info in found], stored, actor)
    return TakesReport(added, len(found) - added)


def _store_takes(
    ws: Workspace, takes: Sequence[tuple[str, str, Path, MediaInfo]], stored: dict[tuple[str, str], str], actor: str
) -> int:
    staging = ws.media.stage()
    added = 0
    try:
        with ws.writing() as s:
            known = set(s.execute(select(col(Asset.sha256))).scalars())
            for item_id, _, source, info in takes:
                staging.keep(staging.intake(source, info.sha256), info.sha256, info.ext)
                if info.sha256 not in known:
                    known.add(info.sha256)
                    s.add(Asset(**info.asset_columns(source.name), provenance={"take_of": item_id}))
            s.flush()  # the assets before the takes that name them
            for item_id, take, _, info in takes:
                if (item_id, take) in stored:
                    continue
                s.add(AudioTake(item_id=item_id, take=take, sha256=info.sha256, recorded_by=actor))
                record_event(s, actor, "take.added", f"item:{item_id}", None, {"take": take, "sha256": info.sha256})
                added += 1
        staging.commit()
    except BaseException:
        staging.discard()
        raise
    refresh_audio_gates(ws)
    return added


def add_take(ws: Workspace, item_id: str, take: str, source: Path, actor: str) -> None:
    """Store one uploaded take (the app's upload): the same checks as a takes file of one line."""
    with ws.session() as s:
        if _audio_item(s, item_id) is None:
            raise NotFoundError(f"no item {item_id!r} with audio in this workspace")
        stored = {(t.item_id, t.take): t.sha256 for t in s.execute(select(AudioTake)).scalars()}
    info = inspect_audio(source, sha256_file(source), max_seconds=ws.settings.media.max_audio_seconds)
    if stored.get((item_id, take), info.sha256) != info.sha256:
        raise ValidationFailed(
            [Problem(f"take {take!r} of {item_id!r} is stored with other audio; name a new take", "take")]
        )
    _store_takes(ws, [(item_id, take, source, info)], stored, actor)


def takes_of(ws: Workspace, item_id: str) -> list[AudioTake]:
    with ws.session() as s:
        return list(
            s.execute(
                select(AudioTake).where(col(AudioTake.item_id) == item_id).order_by(col(AudioTake.take))
            ).scalars()
        )


def producer_refusal(producer: str, item_id: str, named: str) -> str | None:
    """Why ``producer`` may not choose the take of an item whose clip names ``named`` as its producer."""
    if named == producer:
        return None
    who = f"its producer is {named!r}" if named else "its provenance names no producer"
    return f"{producer!r} cannot choose the take of {item_id!r}: {who}"


def choose_take(ws: Workspace, item_id: str, take: str, producer: str, note: str = "") -> TakeChoice:
    """Record the producer's choice of a take (TRIAD B.2); only the clip's producer may choose."""
    ws.require_role(producer, "producer")
    item = ws.item(item_id)
    refusal = producer_refusal(producer, item_id, credits_of(item.provenance).producer)
    if refusal:
        raise PermissionDenied(refusal)
    chosen = next((t for t in takes_of(ws, item_id) if t.take == take), None)
    if chosen is None:
        raise NotFoundError(
            f"{item_id!r} has no take {take!r}; its takes: {', '.join(t.take for t in takes_of(ws, item_id)) or 'none'}"
        )
    with ws.writing() as s:
        row = TakeChoice(item_id=item_id, take=take, sha256=chosen.sha256, producer=producer, note=_checked_note(note))
        s.add(row)
        s.flush()
        record_event(s, producer, "take.chosen", f"item:{item_id}", None, {"take": take, "sha256": chosen.sha256})
        s.expunge(row)
    refresh_audio_gates(ws)
    return row


def _checked_note(note: str) -> str:
    return _NoteModel(note=note).note


class _NoteModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    note: Annotated[Note, StringConstraints(max_length=4000)] = ""


def record_spot_check(ws: Workspace, item_id: str, listener: str, verdict: Verdict, note: str = "") -> SpotCheck:
    """Store a listener's spot check of a sampled clip; its speakers, producer and author are refused."""
    ws.require_role(listener, "reviewer")
    item = ws.item(item_id)
    if item_id not in spot_check_sample(ws):
        raise ValidationFailed(
            [Problem(f"{item_id!r} is not in the spot-check sample (`curate audio spot-sample`)", "item")]
        )
    refusal = listener_refusal(listener, item_id, credits_of(item.provenance).people, item.author)
    if refusal:
        raise PermissionDenied(refusal)
    assert item.audio is not None
    with ws.writing() as s:
        row = s.execute(
            select(SpotCheck).where(
                col(SpotCheck.item_id) == item_id,
                col(SpotCheck.listener) == listener,
                col(SpotCheck.sha256) == item.audio,
            )
        ).scalar_one_or_none() or SpotCheck(item_id=item_id, sha256=item.audio, listener=listener, verdict=verdict)
        row.verdict, row.note = verdict, _checked_note(note)
        s.add(row)
        s.flush()
        record_event(s, listener, "spot_check.recorded", f"item:{item_id}", None, {"verdict": verdict})
        s.expunge(row)
    refresh_audio_gates(ws)
    return row
