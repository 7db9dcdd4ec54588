"""The plain facts the derivation reads: an item, a review record, a stage's outcome.

They live apart from ``workflow`` so that the kinds (``curation.kinds``), whose stages judge these facts,
and the workflow, which iterates the kinds, both import them without importing each other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from .vocab import MODALITIES

_ENCODE = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode
"""``json.dumps`` with these options builds a new encoder per call; the derivation hashes every stage's inputs
of every item, so one encoder is made once."""


def _plain(value: Any) -> bool:
    """Whether orjson writes ``value`` exactly as ``_ENCODE`` does: strings, integers, booleans, None, and
    lists, tuples and string-keyed dicts of them (floats are written differently: ``1e+16`` against ``1e16``)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is dict:
        for key, item in value.items():  # noqa: SIM110 (a loop: no generator per call, hashed 45,000 times)
            if type(key) is not str or (type(item) is not str and not _plain(item)):
                return False
        return True
    if kind is tuple or kind is list:
        for item in value:  # noqa: SIM110
            if type(item) is not str and not _plain(item):
                return False
        return True
    return False


def canonical_json(value: Any) -> bytes:
    """``value`` as UTF-8 JSON with sorted keys and no spaces, byte for byte what ``json`` writes with those
    options: what content hashes are taken of. orjson writes it, several times faster, where it writes the
    same bytes (``_plain``); ``json`` writes everything else."""
    if _plain(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # a string that is not valid Unicode, an integer past 64 bits
            pass
    return _ENCODE(value).encode()


_DIGIT_MARKS = bytes(0x31 if 0x30 <= b <= 0x39 else 0x30 for b in range(256))
"""Every byte to ``1`` for a digit, ``0`` for anything else: a run of digits becomes a run of ``1``."""
_LONG_INTEGER = b"1" * 19
"""orjson reads an integer of 19 or more digits as a float where it passes 64 bits (``json``: as an integer)."""
_EXACT = range(-(2**63), 2**64)
"""The integers orjson reads exactly: 64 bits, signed or not (perceptual hashes are unsigned 64-bit)."""


def _orjson_reads_exactly(data: bytes) -> bool:
    """Whether no run of digits in ``data``, read as an integer, passes 64 bits. Runs of 19 or more digits are
    found at C speed (``bytes.translate`` marks the digits, ``find`` the runs) and only those are read; a run
    inside a string or a float is judged as if it were an integer, which at worst sends the text to ``json``."""
    marks = data.translate(_DIGIT_MARKS)
    start = marks.find(_LONG_INTEGER)
    while start >= 0:
        end = marks.find(b"0", start)
        end = len(marks) if end < 0 else end
        value = data[start - (start > 0 and data[start - 1] == 0x2D) : end]  # with its minus sign
        if len(value) > 21 or int(value) not in _EXACT:
            return False
        start = marks.find(_LONG_INTEGER, end)
    return True


def _json_or_orjson(text: str) -> Any:
    """One text read as ``json.loads`` reads it: by orjson unless it holds an integer past 64 bits."""
    return orjson.loads(text) if _orjson_reads_exactly(text.encode("utf-8", "surrogatepass")) else json.loads(text)


def json_reader(texts: Iterable[str]) -> Callable[[str], Any]:
    """What reads ``texts`` (JSON columns read as text) as ``json.loads`` would: orjson, several times faster,
    unless a text holds an integer past 64 bits, which orjson reads as a float; then each text is looked at
    on its own, and those are read by ``json``. All texts are looked at at once first (the common case: no
    run of 19 digits anywhere). orjson refuses NaN, infinities and unpaired surrogates, which ``json`` wrote
    and reads: callers read what it refuses with ``json.loads``."""
    joined = "\n".join(texts).encode("utf-8", "surrogatepass")
    return orjson.loads if _orjson_reads_exactly(joined) else _json_or_orjson


def json_column(value: Any, loads: Callable[[str], Any]) -> Any:
    """A JSON column read as text (SQLite) parsed as the column type would (``json.loads``), by ``loads``
    (:func:`json_reader`); what orjson refuses (NaN, infinities, unpaired surrogates) by ``json.loads``
    itself. PostgreSQL's driver hands JSON over already parsed."""
    if not isinstance(value, str):
        return value
    try:
        return loads(value)
    except orjson.JSONDecodeError:
        return json.loads(value)


def digest(*parts: Any) -> str:
    """A stable hash of JSON-able parts: what stage inputs and group inputs are made of."""
    return hashlib.sha256(canonical_json(parts)).hexdigest()


@dataclass(frozen=True)
class ItemFacts:
    """What the workflow needs of an item (loaded in bulk, without ORM objects).

    Fields of a modality the item lacks are empty strings. ``extra`` holds a kind's own fields (a kind
    other than ``mcq`` may have no options or answer).
    """

    id: str
    group: str
    author: str
    revision: int
    context: str
    question: str
    options: dict[str, str]
    answer: str
    image: str
    audio: str
    audio_source: str
    content_hash: str
    kind: str = "mcq"
    modalities: tuple[str, ...] = MODALITIES
    extra: Mapping[str, Any] = field(default_factory=dict)
    image_source: str = ""
    """The image's provenance source (``ai_generated`` images are screened for artefacts)."""
    former_authors: frozenset[str] = frozenset()
    """Who authored an earlier revision but not this one: still authors for separation and exposure."""

    def authored_by(self, person: str) -> bool:
        """Authorship is history: the current author or the author of any earlier revision."""
        return person == self.author or person in self.former_authors


class RecordFacts(NamedTuple):
    """One review record as the derivation reads it (a tuple: 70,000 of them load in a blink)."""

    subject: str
    stage: str
    reviewer: str
    revision: int
    inputs_hash: str
    payload: Mapping[str, Any]
    id: int


class MergedRecords(dict[str, list[RecordFacts]]):
    """Records by stage, as a separation rule reads them, that also answer "every record of this reviewer":
    the derivation asks the rules about every reviewer of every stage of every item, and each question then
    reads that reviewer's few records instead of all of them."""

    _by_reviewer: dict[str, list[RecordFacts]] | None = None
    _shapes: dict[tuple[str, ...], tuple[tuple[int, str, str], ...]] | None = None

    def of_reviewer(self, reviewer: str) -> list[RecordFacts]:
        """Every record (any stage) of ``reviewer``; built on first use (the records must not change after)."""
        if self._by_reviewer is None:
            index: dict[str, list[RecordFacts]] = {}
            for recs in self.values():
                for r in recs:
                    index.setdefault(r.reviewer, []).append(r)
            self._by_reviewer = index
        return self._by_reviewer.get(reviewer, [])

    def shape(self, *subjects: str) -> tuple[tuple[int, str, str], ...]:
        """The records in id order as (which of ``subjects`` they are about, or ``len(subjects)`` for another,
        stage, reviewer): all that a rule comparing subjects, stages, reviewers and order reads, so items
        reviewed alike share one verdict. Built once per ``subjects``."""
        if self._shapes is None:
            self._shapes = {}
        found = self._shapes.get(subjects)
        if found is None:
            where = {s: n for n, s in enumerate(subjects)}
            other = len(subjects)
            ordered = sorted((r for recs in self.values() for r in recs), key=lambda r: r.id)
            found = self._shapes[subjects] = tuple((where.get(r.subject, other), r.stage, r.reviewer) for r in ordered)
        return found


@dataclass
class StageOutcome:
    """``passed`` is None while the stage lacks its quorum.

    ``held``: the stage lets the item go on to its later stages, but ``reasons`` hold it (state ``held``) once
    every stage is through, until a maintainer settles them (a checklist whose verdict depends on the rule).
    """

    passed: bool | None
    reasons: list[str] = field(default_factory=list)
    held: bool = False
