"""Each clip's speech-to-text transcript, per model (TRIAD G.6: models without native audio read a transcript).

The checker's backends (``checker.transcription``) produce the text; this module says which clips still need
one from a model, stores what a model gave, and answers which transcript the checker's transcript route reads.
A clip is the content-addressed audio asset, so sisters sharing a clip share its transcript, and a rerun with
the same model skips every clip it already transcribed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlmodel import Session, col

from .errors import NotFoundError
from .reference_tables import AudioTranscript
from .tables import Asset, Item
from .workspace import Workspace, record_event

TRANSCRIBED = "audio.transcribed"
"""The event action of a stored transcript; its subject is ``asset:<sha256>``."""


@dataclass(frozen=True)
class Clip:
    """One audio asset to transcribe: where it is, and the languages of the items that use it."""

    sha256: str
    path: Path
    languages: tuple[str, ...]
    items: tuple[str, ...]


class TranscriptIn(BaseModel):
    """One transcript as a backend returns it."""

    model_config = ConfigDict(extra="forbid", strict=True)
    audio_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    model: str = Field(min_length=1, max_length=300)
    backend: str = Field(min_length=1, max_length=30)
    text: str = Field(max_length=100_000)
    language: str | None = Field(default=None, max_length=20)


def clips(ws: Workspace, ids: Sequence[str] | None = None) -> list[Clip]:
    """The distinct audio clips of the workspace's items (all, or ``ids``), in content-hash order."""
    with ws.session() as s:
        query = select(col(Item.id), col(Item.audio), col(Item.language)).where(col(Item.audio).is_not(None))
        rows = list(s.execute(query.order_by(col(Item.id))).all())
        if ids:
            known = {i for (i,) in s.execute(select(col(Item.id)).where(col(Item.id).in_(list(ids))))}
            missing = sorted(set(ids) - known)
            if missing:
                raise NotFoundError(f"no item named {', '.join(missing)} in this workspace (curate status lists them)")
            rows = [r for r in rows if r[0] in set(ids)]
        assets = {a.sha256: a for a in s.execute(select(Asset).where(col(Asset.kind) == "audio")).scalars()}
    by_clip: dict[str, tuple[list[str], set[str]]] = {}
    for item_id, sha, language in rows:
        items, languages = by_clip.setdefault(sha, ([], set()))
        items.append(item_id)
        languages.add(language)
    return [
        Clip(sha, ws.asset_path(assets[sha]), tuple(sorted(langs)), tuple(items))
        for sha, (items, langs) in sorted(by_clip.items())
    ]


def pending(ws: Workspace, model: str, candidates: Iterable[Clip]) -> list[Clip]:
    """The clips ``model`` has not transcribed yet."""
    with ws.session() as s:
        done = set(
            s.execute(select(col(AudioTranscript.audio_sha256)).where(col(AudioTranscript.model) == model)).scalars()
        )
    return [clip for clip in candidates if clip.sha256 not in done]


def store_transcripts(ws: Workspace, transcripts: Sequence[TranscriptIn], actor: str) -> int:
    """Store each transcript (one transaction; an event per clip); a clip and model already stored is kept."""
    stored = 0
    with ws.writing() as s:
        for t in transcripts:
            if s.get(AudioTranscript, (t.audio_sha256, t.model)) is not None:
                continue
            s.add(_row(t, actor))
            record_event(
                s, actor, TRANSCRIBED, f"asset:{t.audio_sha256}", None, {"model": t.model, "backend": t.backend}
            )
            stored += 1
    return stored


def _row(t: TranscriptIn, actor: str) -> AudioTranscript:
    return AudioTranscript(
        audio_sha256=t.audio_sha256,
        model=t.model,
        backend=t.backend,
        text=t.text.strip(),
        language=t.language,
        created_by=actor,
    )


def transcripts_of(session: Session, shas: Iterable[str]) -> dict[str, AudioTranscript]:
    """The transcript the checker reads for each clip: the most recently stored one (ties: the model's name).

    Transcribing a clip again with a newer model therefore moves the checker to it; the earlier rows stay.
    """
    wanted = sorted(set(shas))
    out: dict[str, AudioTranscript] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = session.execute(
            select(AudioTranscript)
            .where(col(AudioTranscript.audio_sha256).in_(chunk))
            .order_by(col(AudioTranscript.created_at), col(AudioTranscript.model))
        ).scalars()
        for row in rows:
            out[row.audio_sha256] = row
    return out


def all_transcripts(ws: Workspace) -> list[AudioTranscript]:
    """Every stored transcript, by clip then model."""
    with ws.session() as s:
        return list(
            s.execute(
                select(AudioTranscript).order_by(col(AudioTranscript.audio_sha256), col(AudioTranscript.model))
            ).scalars()
        )
