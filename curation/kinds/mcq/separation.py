"""TRIAD C.2's separation of roles as TRIAD's pool of five ran it: the ``mcq`` stages' separation rules (design.md,
"Exposure and separation").

Per item (§4.4: each query written by one annotator and reviewed by the other four):
- the author (A) reviews nothing;
- the blind answer checker (D) holds no role on the item but the subset checklist (and stays unexposed:
  ``curation.exposure``);
- the group reviewer (E, of the item's group) is neither D nor a subset-checklist reviewer;
- the first grammar reviewer (B) and the first listener (C) are different people, but each may give the other's
  second sign-off, and E may give either;
- subset-checklist reviewers come from B, C and D (they walk through it jointly).
With the default quorums five people staff every stage: A writes; B = grammar #1 + checklist + listener #2;
C = listener #1 + checklist + grammar #2; D = checklist + blind; E = group (or E gives the second sign-offs).

A person's *first* record on an item decides their role there: a later record in a role that does not go with
it is refused (import, queues) and ignored (the derivation), whatever the order the records arrive in a file
(records of one file count in line order). "First" is the record's id: stored records keep theirs when replaced,
and a new record comes after every stored one. Likewise the first grammar reviewer is whoever recorded grammar
first on the item, the first listener whoever listened first.

The rules read the records they are given by stage: for an item stage, the item's records and its group's; for
the group stage, the group's records and every live sister's (``curation.workflow.separation_records``). With
``[review] separation = "author_only"`` the workspace keeps only "nobody reviews what they authored".
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...audio_production.credits import AUDIO_PEOPLE, listener_refusal
from ...facts import ItemFacts, MergedRecords, RecordFacts
from .._parts import RecordsByStage, no_sister_author, not_author

LETTERS = {"grammar": "B", "audio_signoff": "C", "answer_check": "D", "group_integration": "E"}
"""TRIAD C.2's letter of each mcq stage; the subset checklist has none (it goes with B, C or D)."""
STAGE_OF = {letter: stage for stage, letter in LETTERS.items()}
CHECKLIST = "subset_checklist"
ROLE_NAMES = {
    "A": "author",
    "B": "grammar reviewer",
    "C": "audio listener",
    "D": "blind answer checker",
    "E": "group reviewer",
    CHECKLIST: "subset-checklist reviewer",
}
COMPATIBLE = {
    frozenset({"B", "C"}),  # each may give the other's second sign-off (never both firsts: ``_first_of_both``)
    frozenset({"B", "E"}),
    frozenset({"C", "E"}),
    frozenset({"B", CHECKLIST}),
    frozenset({"C", CHECKLIST}),
    frozenset({"D", CHECKLIST}),
}
"""The pairs of roles one person may hold on an item; every other pair of different roles is refused."""
WHY = {
    "D": "the blind answer checker holds no role on the item but the subset checklist",
    "E": "the group reviewer is neither the blind answer checker nor a subset-checklist reviewer",
}


def _role(stage: str) -> str | None:
    return CHECKLIST if stage == CHECKLIST else LETTERS.get(stage)


def compatible(first: str, second: str) -> bool:
    """Whether one person may hold both roles on an item (letters, or ``subset_checklist``)."""
    return first == second or frozenset({first, second}) in COMPATIBLE


def _conflict(reviewer: str, stage: str, subjects: set[str], records: RecordsByStage) -> str | None:
    """The first role of ``reviewer`` (on these subjects) that the record at ``stage`` may not join, if any:
    the role of their earliest record, before their first one at ``stage``, whose role does not go with it.

    One pass over the records (the derivation asks this for every reviewer of every stage of every item)."""
    wanted = _role(stage)
    if wanted is None:
        return None
    cutoff = first_id = math.inf
    first_held: str | None = None
    if isinstance(records, MergedRecords):
        mine: Iterable[RecordFacts] = records.of_reviewer(reviewer)
    else:
        mine = (r for recs in records.values() for r in recs if r.reviewer == reviewer)
    for r in mine:
        if r.subject not in subjects:
            continue
        if r.stage == stage:
            if r.id < cutoff:
                cutoff = r.id
        elif r.id < first_id:
            held = _role(r.stage)
            if held is not None and not compatible(held, wanted):
                first_id, first_held = r.id, held
    return first_held if first_id < cutoff else None


def _first(records: Sequence[RecordFacts], subject: str) -> RecordFacts | None:
    return min((r for r in records if r.subject == subject), key=lambda r: r.id, default=None)


def _first_of_both(reviewer: str, stage: str, subject: str, records: RecordsByStage) -> str | None:
    """At grammar or audio sign-off: the other letter (B or C) when ``reviewer`` was first there and would be
    first here too (nobody else signed here before them); a second sign-off is fine."""
    wanted = _role(stage)
    if wanted not in ("B", "C"):
        return None
    other = "C" if wanted == "B" else "B"
    mine = others = math.inf  # the first ids here of the reviewer's records and of anyone else's
    for r in records.get(stage, ()):
        if r.subject == subject:
            if r.reviewer == reviewer:
                mine = min(mine, r.id)
            else:
                others = min(others, r.id)
    if others < mine:
        return None  # someone else signed here first: this is a second sign-off
    first_other = _first(records.get(STAGE_OF[other], ()), subject)
    if first_other is not None and first_other.reviewer == reviewer and first_other.id < mine:
        return other
    return None


def _refusal(reviewer: str, stage: str, held: str, where: str) -> str:
    wanted = _role(stage) or stage
    letter = held if len(held) == 1 else "checklist"
    why = WHY.get(held) or WHY.get(wanted) or "A-E are different people; checklist reviewers hold B, C or D"
    return (
        f"separation:triad: {reviewer!r} is already the {ROLE_NAMES[held]} ({letter}) of {where} and cannot "
        f"also be its {ROLE_NAMES[wanted]} ({why}; TRIAD C.2)"
    )


def _first_refusal(reviewer: str, stage: str, held: str, where: str) -> str:
    wanted = _role(stage) or stage
    return (
        f"separation:triad: {reviewer!r} is the first {ROLE_NAMES[held]} ({held}) of {where} and cannot also be "
        f"its first {ROLE_NAMES[wanted]} ({wanted}): B and C are different people, each may give the other's "
        f"second sign-off once someone else has given the first (TRIAD C.2)"
    )


Objection = tuple[str, str] | None
"""``("held", role)``, ``("first", letter)`` or None: what the rule says against a record, without naming the item."""


def _objection(reviewer: str, stage: str, item_subject: str, group_subject: str, records: RecordsByStage) -> Objection:
    """What TRIAD's letters say against ``reviewer``'s record at ``stage`` on an item: ``("held", role)``
    (they hold a role that does not go with it), ``("first", letter)`` (first B and first C), or None."""
    held = _conflict(reviewer, stage, {item_subject, group_subject}, records)
    if held is not None:
        return ("held", held)
    first = _first_of_both(reviewer, stage, item_subject, records)
    return None if first is None else ("first", first)


@functools.lru_cache(maxsize=4096)
def _objection_of_shape(reviewer: str, stage: str, shape: tuple[tuple[int, str, str], ...]) -> Objection:
    """``_objection`` over records of this shape (``MergedRecords.shape``): the derivation asks it for every
    record of every item, and items reviewed alike (the same people in the same order) share the answer."""
    subjects = ("item:?", "group:?", "other:?")
    records: dict[str, list[RecordFacts]] = {}
    for n, (which, at, who) in enumerate(shape):
        records.setdefault(at, []).append(RecordFacts(subjects[which], at, who, 0, "", {}, n))
    return _objection(reviewer, stage, subjects[0], subjects[1], records)


@dataclass(frozen=True)
class TriadSeparation:
    """The separation rule of one item stage: TRIAD's letters (``[review] separation = "triad"``)."""

    stage: str
    policy = "triad"
    """``[review] separation`` relaxes rules of this policy to "nobody reviews what they authored"."""

    def __call__(self, reviewer: str, item: ItemFacts, records: RecordsByStage) -> str | None:
        mine = not_author(reviewer, item, records)
        if mine:
            return mine
        item_subject, group_subject = f"item:{item.id}", f"group:{item.group}"
        if isinstance(records, MergedRecords):
            found = _objection_of_shape(reviewer, self.stage, records.shape(item_subject, group_subject))
        else:
            found = _objection(reviewer, self.stage, item_subject, group_subject, records)
        if found is None:
            return None
        why, role = found
        if why == "held":
            return _refusal(reviewer, self.stage, role, repr(item.id))
        return _first_refusal(reviewer, self.stage, role, repr(item.id))


@dataclass(frozen=True)
class TriadGroupSeparation:
    """The group stage's separation rule: the group reviewer (E) holds no other role on any live sister."""

    stage: str
    policy = "triad"

    def __call__(self, reviewer: str, group: str, sisters: Sequence[ItemFacts], records: RecordsByStage) -> str | None:
        mine = no_sister_author(reviewer, group, sisters, records)
        if mine:
            return mine
        for sister in sisters:
            held = _conflict(reviewer, self.stage, {f"item:{sister.id}", f"group:{group}"}, records)
            if held is not None:
                return _refusal(reviewer, self.stage, held, f"{sister.id!r} (group {group!r})")
        return None


@dataclass(frozen=True)
class ListenerSeparation(TriadSeparation):
    """Audio sign-off's rule: TRIAD's letters, and no speaker or producer of the item's clip listens to it
    (TRIAD B.4; ``separation:recording``). The recording people come with the item's facts
    (``ItemFacts.extra["audio_people"]``, ``curation.audio_production.credits.with_audio_people``)."""

    def __call__(self, reviewer: str, item: ItemFacts, records: RecordsByStage) -> str | None:
        people = item.extra.get(AUDIO_PEOPLE, ())
        return listener_refusal(reviewer, item.id, people) or super().__call__(reviewer, item, records)
