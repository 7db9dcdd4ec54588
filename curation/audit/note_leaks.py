"""Leaks in an item's notes (TRIAD App. E.3: a note "is not allowed to mention the answer option, the leaf
category, or any sister identifier"). One leak per finding, on the one item whose note it is:

- ``note_option``: an option's whole text stands in the note (tokens as the item's language cuts them: whole
  words in order for space-separated scripts, characters for Chinese and other scripts without spaces), the
  answer's or any other option's: a note naming one option steers a reader towards or away from it. Blocks by
  default; ``[gates] note_option = "warn"`` only lists it (a transcript may have to quote an option's word).
- ``note_leaf``: one of the item's own taxonomy leaves as a whole word ("prosodic" in "a prosodic cue"; never
  inside another word). Blocks.
- ``note_sister``: the id of another item of the same scene group, case-insensitively, not inside a longer id.
  Blocks.

A maintainer decides a finding with ``curate audit resolve LEAK --distinct --reason ...`` (or edits the note).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .leaks import Leak
from .text import contains_phrase, words

if TYPE_CHECKING:
    from .run import AuditSubject

NOTE_LEAK_KINDS = ("note_option", "note_leaf", "note_sister")
_ID_CHARACTER = r"[A-Za-z0-9_:\-]"
"""What continues an id (``.`` only when a letter or digit follows it: a full stop ends a sentence)."""


def _mentions_id(note: str, item_id: str) -> bool:
    pattern = rf"(?<!{_ID_CHARACTER})(?<!{_ID_CHARACTER}\.){re.escape(item_id)}(?!{_ID_CHARACTER}|\.[A-Za-z0-9])"
    return re.search(pattern, note, flags=re.IGNORECASE) is not None


def note_leaks(subjects: Sequence[AuditSubject], note_option: str = "block") -> list[Leak]:
    """Every note's mentions of an option, a leaf of its item, or a sister's id; ``note_option`` (``warn`` or
    ``block``) is the severity of the first kind."""
    sisters: dict[str, list[str]] = defaultdict(list)
    for subject in subjects:
        sisters[subject.group].append(subject.id)
    option_severity = "warning" if note_option == "warn" else "block"
    leaks: list[Leak] = []
    for subject in subjects:
        for modality, note in subject.notes.items():
            found = words(note, subject.language)
            for key, text in sorted(subject.options.items()):
                if contains_phrase(found, words(text, subject.language)):
                    evidence: dict[str, object] = {
                        "note": modality,
                        "option": key,
                        "text": text,
                        "is_answer": key == subject.answer,
                        "severity": option_severity,
                    }
                    leaks.append(Leak("note_option", [subject.id], evidence))
            for leaf in subject.leaves:
                if contains_phrase(found, words(leaf)):
                    leaks.append(Leak("note_leaf", [subject.id], {"note": modality, "leaf": leaf, "severity": "block"}))
            for sister in sorted(sisters[subject.group]):
                if sister != subject.id and _mentions_id(note, sister):
                    evidence = {"note": modality, "sister": sister, "severity": "block"}
                    leaks.append(Leak("note_sister", [subject.id], evidence))
    return leaks
