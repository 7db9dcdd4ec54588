"""TRIAD C.2's separation of roles, as the ``mcq`` stages' separation rules (design.md, "Exposure and separation").

Per item, the author (A), the grammar reviewers (B), the audio listeners (C), the blind answer checker (D) and
the group reviewer (E, of the item's group) are different people; subset-checklist reviewers may be anyone who
holds B, C or D on the item (TRIAD's B, C and D walk through it jointly), never A or E.

A person's *first* record on an item decides their role there: a later record in a role that does not go with
it is refused (import, queues) and ignored (the derivation), whatever the order the records arrive in a file
(records of one file count in line order). "First" is the record's id: stored records keep theirs when replaced,
and a new record comes after every stored one.

The rules read the records they are given by stage: for an item stage, the item's records and its group's; for
the group stage, the group's records and every live sister's (``curation.workflow.separation_records``). With
``[review] separation = "author_only"`` the workspace keeps only "nobody reviews what they authored".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...facts import ItemFacts
from .._parts import RecordsByStage, no_sister_author, not_author

LETTERS = {"grammar": "B", "audio_signoff": "C", "answer_check": "D", "group_integration": "E"}
"""TRIAD C.2's letter of each mcq stage; the subset checklist has none (it goes with B, C or D)."""
CHECKLIST = "subset_checklist"
ROLE_NAMES = {
    "A": "author",
    "B": "grammar reviewer",
    "C": "audio listener",
    "D": "blind answer checker",
    "E": "group reviewer",
    CHECKLIST: "subset-checklist reviewer",
}


def _role(stage: str) -> str | None:
    return CHECKLIST if stage == CHECKLIST else LETTERS.get(stage)


def compatible(first: str, second: str) -> bool:
    """Whether one person may hold both roles on an item (letters, or ``subset_checklist``)."""
    if first == second:
        return True
    pair = {first, second}
    return CHECKLIST in pair and bool(pair & {"B", "C", "D"})


def _conflict(reviewer: str, stage: str, subjects: set[str], records: RecordsByStage) -> str | None:
    """The first role of ``reviewer`` (on these subjects) that the record at ``stage`` may not join, if any."""
    wanted = _role(stage)
    if wanted is None:
        return None
    own = [r for recs in records.values() for r in recs if r.reviewer == reviewer and r.subject in subjects]
    cutoff = min((r.id for r in own if r.stage == stage), default=math.inf)
    earlier = sorted((r for r in own if r.id < cutoff), key=lambda r: r.id)
    for rec in earlier:
        held = _role(rec.stage)
        if held is not None and not compatible(held, wanted):
            return held
    return None


def _refusal(reviewer: str, stage: str, held: str, where: str) -> str:
    role = ROLE_NAMES[_role(stage) or stage]
    return (
        f"separation:triad: {reviewer!r} is already the {ROLE_NAMES[held]} ({held if len(held) == 1 else 'B/C/D'}) "
        f"of {where} and cannot also be its {role} (TRIAD C.2: A-E are different people; checklist reviewers "
        "hold B, C or D)"
    )


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
        held = _conflict(reviewer, self.stage, {f"item:{item.id}", f"group:{item.group}"}, records)
        return None if held is None else _refusal(reviewer, self.stage, held, repr(item.id))


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
