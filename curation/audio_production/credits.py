"""Who made an item's audio, as its provenance names them (``provenance.audio`` in an item line).

Optional keys beside ``source`` and ``license``: ``speakers`` (people's names: the voices in the clip),
``producer`` (who directed the recording and chose the take), ``session`` and ``equipment`` (TRIAD B.5's
recording controls). They are checked here and kept only when given, so items without them keep their content
hashes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

NAME = re.compile(r"^[A-Za-z0-9._:\-]{1,200}$")
CREDIT_KEYS = ("speakers", "producer", "session", "equipment")
PRODUCED_SOURCES = ("voice_acting", "tts_edited")
"""The sources a producer makes (TRIAD S2 voice acting, S3 edited TTS); a ``natural`` clip was found."""
TEXT_MAX = 500


@dataclass(frozen=True)
class AudioCredits:
    """An item's audio credits; empty values where the provenance names none."""

    source: str = ""
    speakers: tuple[str, ...] = ()
    producer: str = ""
    session: str = ""
    equipment: str = ""

    @property
    def people(self) -> frozenset[str]:
        """Everyone involved in the recording: its speakers and its producer (TRIAD B.4: not its listeners)."""
        return frozenset(self.speakers) | ({self.producer} if self.producer else frozenset())

    @property
    def voice_acted(self) -> bool:
        """A voice-acted clip produced here: takes and spot checks apply (a clip naming no producer is judged
        as before these records existed)."""
        return self.source == "voice_acting" and bool(self.producer)

    @property
    def controls(self) -> tuple[tuple[str, ...], str, str]:
        """What TRIAD B.5 asks sisters to share: actor(s), session and equipment."""
        return (tuple(sorted(self.speakers)), self.session, self.equipment)


def credits_of(provenance: Mapping[str, Any] | None) -> AudioCredits:
    """The credits of an item's stored provenance (the whole ``provenance`` object)."""
    audio = (provenance or {}).get("audio") or {}
    return AudioCredits(
        source=str(audio.get("source", "")),
        speakers=tuple(audio.get("speakers") or ()),
        producer=str(audio.get("producer") or ""),
        session=str(audio.get("session") or ""),
        equipment=str(audio.get("equipment") or ""),
    )


def credit_problems(source: str, extra: Mapping[str, Any]) -> list[str]:
    """What is wrong with the credit keys of one audio provenance (``extra``: its keys beyond source and
    licence); an empty list when they are well formed."""
    problems = []
    speakers = extra.get("speakers")
    if speakers is not None:
        if not isinstance(speakers, list) or not all(isinstance(s, str) and NAME.fullmatch(s) for s in speakers):
            problems.append("speakers: a list of people's names (letters, digits and ._:- only)")
        elif not speakers or len(set(speakers)) != len(speakers):
            problems.append("speakers: name each speaker once, at least one (or leave the key out)")
        elif source == "tts":
            problems.append("speakers: a TTS-only clip has no speaker")
    producer = extra.get("producer")
    if producer is not None:
        if not isinstance(producer, str) or not NAME.fullmatch(producer):
            problems.append("producer: a person's name (letters, digits and ._:- only)")
        elif source not in PRODUCED_SOURCES:
            problems.append(f"producer: a {source} clip has no producer (only {', '.join(PRODUCED_SOURCES)} do)")
    for key in ("session", "equipment"):
        value = extra.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip() or len(value) > TEXT_MAX):
            problems.append(f"{key}: a text of 1 to {TEXT_MAX} characters")
    if source == "voice_acting" and producer is not None and speakers is None:
        problems.append("speakers: a voice-acted clip with a producer names its speaker(s)")
    return problems


AUDIO_PEOPLE = "audio_people"
"""The key of ``ItemFacts.extra`` that carries the item's recording people (its audio's speakers and producer),
which the separation rules read."""


def with_audio_people(extra: Mapping[str, object], provenance: Mapping[str, Any] | None) -> dict[str, object]:
    """An item's ``extra`` facts with its recording people added (unchanged when its provenance names none)."""
    people = credits_of(provenance).people
    return {**extra, AUDIO_PEOPLE: tuple(sorted(people))} if people else dict(extra)


def listener_refusal(listener: str, item_id: str, recording_people: Iterable[str], author: str = "") -> str | None:
    """Why ``listener`` may not listen to an item's clip for a check (audio sign-off, spot check): they wrote the
    item, or spoke in or produced its clip (TRIAD B.4: listeners not involved in recording)."""
    if listener == author:
        return f"{listener!r} authored {item_id!r}: nobody reviews their own item"
    if listener in set(recording_people):
        return (
            f"separation:recording: {listener!r} spoke in or produced the audio of {item_id!r} and cannot listen "
            "to it for a check (TRIAD B.4: listeners were not involved in recording)"
        )
    return None
