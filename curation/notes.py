"""An mcq item's notes: TRIAD App. E.3's human descriptions of its media, written once per item.

``audio``: the A+ note (the transcript, prosody relevant to disambiguation, speaker or voice properties, non-speech
events); ``image``: the I+ note (a literal caption of the scene). A note never names the answer option, the item's
taxonomy leaf or a sister (``curate audit`` flags it: ``leak:note_option``, ``leak:note_leaf``,
``leak:note_sister``, :mod:`curation.audit.note_leaks`).

Notes are stored in the item row's ``extra`` column as ``{"notes": {"image": ..., "audio": ...}}`` and enter the
item's canonical content (and so its content hash) only when it has one: an item without notes hashes as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NOTE_MODALITIES = ("image", "audio")
"""The modalities a note describes, in their canonical order (the text is its own description)."""
NOTE_MAX_CHARS = 4000
"""The longest note: TRIAD's notes are compact (a transcript with prosody marks, a literal caption)."""
NOTE_LABELS = {"image": "Image note", "audio": "Audio note"}
"""How pages name each note."""


def item_notes(extra: Mapping[str, Any] | None) -> dict[str, str]:
    """Modality -> note of an item's ``extra`` (empty when it has none), in canonical order."""
    found = (extra or {}).get("notes")
    if not isinstance(found, Mapping):
        return {}
    return {m: found[m] for m in NOTE_MODALITIES if isinstance(found.get(m), str) and found[m]}


def notes_extra(notes: Mapping[str, str] | None) -> dict[str, Any] | None:
    """The ``extra`` column of an mcq item with these notes (None without any)."""
    kept = {m: notes[m] for m in NOTE_MODALITIES if notes and notes.get(m)}
    return {"notes": kept} if kept else None


def note_columns(notes: Mapping[str, str], modalities: tuple[str, ...] | list[str]) -> dict[str, str | None]:
    """A release record's ``image_note`` and ``audio_note`` (None where absent), for the modalities it has."""
    return {f"{m}_note": notes.get(m) for m in NOTE_MODALITIES if m in modalities}
