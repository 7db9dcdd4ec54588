"""Exposure: who has seen an item's label, so that nobody shown a label does its blind check.

design.md, "Exposure and separation": a person is *exposed* to an item's label when they authored any item
of its group, recorded a group-integration review of its group, or were shown the label by a page, an export
or a Label Studio project. The first two follow from what the workspace already stores (items, review
records); the third is an event that whoever showed the label records here with :func:`record_exposure`.
:func:`exposures` answers "who is exposed to which item" from all three, so that one query serves every
check (an answer-check record refused, a queue that must not offer an item).

Exposure is never undone: a label once seen stays seen, whatever happens to the page or project later.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlmodel import Session, col

from .authorship import former_authors
from .tables import Event, Item, ReviewRecord
from .workspace import Workspace, record_event

EXPOSED = "label.exposed"
"""The event action of an exposure; its subject is ``item:<id>``, its ``after`` names the person and the medium."""

AUTHORED = "authored an item of the group"
GROUP_REVIEW = "recorded a group-integration review of the group"


@dataclass(frozen=True)
class Exposure:
    """One reason ``person`` knows ``item``'s label: ``via`` says how, ``at`` since when (None: not timed)."""

    person: str
    item: str
    via: str
    at: datetime | None


def record_exposure(session: Session, actor: str, people: Iterable[str], items: Iterable[str], via: str) -> int:
    """Record, inside the caller's transaction, that each person was shown the label of each item.

    ``via`` names the medium precisely (which page, export or project and task): an exposure already
    recorded for the same person, item and ``via`` is not recorded twice, so callers may repeat themselves.
    ``actor`` is who showed the label (the CLI, the bridge). Returns how many events were added.
    """
    wanted = {(p, i) for p in set(people) for i in set(items)}
    if not wanted:
        return 0
    subjects = sorted({f"item:{i}" for _, i in wanted})
    known: set[tuple[str, str]] = set()
    for chunk in _chunks(subjects):
        for subject, after in session.execute(
            select(col(Event.subject), col(Event.after)).where(
                col(Event.action) == EXPOSED, col(Event.subject).in_(chunk)
            )
        ):
            if (after or {}).get("via") == via:
                known.add(((after or {}).get("person", ""), subject.removeprefix("item:")))
    added = 0
    for person, item in sorted(wanted - known):
        record_event(session, actor, EXPOSED, f"item:{item}", None, {"person": person, "via": via})
        added += 1
    return added


def exposures(session: Session, items: Iterable[str] | None = None) -> dict[str, list[Exposure]]:
    """Every known exposure of the given items (default: all items), by item id; people may repeat.

    Derived exposures (authorship of a sister, a group-integration record) come first, then recorded
    events in the order they happened. Items without any exposure are absent.
    """
    rows = session.execute(select(col(Item.id), col(Item.group_id), col(Item.author))).all()
    wanted = None if items is None else set(items)
    group_of = {item_id: group for item_id, group, _ in rows}
    authors: dict[str, set[str]] = {}
    for _, group, author in rows:
        authors.setdefault(group, set()).add(author)
    for item_id, people in former_authors(session).items():  # authorship is history
        authors.setdefault(group_of[item_id], set()).update(people)
    targets = sorted(group_of if wanted is None else wanted & set(group_of))
    groups = sorted({group_of[i] for i in targets})
    group_reviewers: dict[str, list[tuple[str, datetime]]] = {}
    for chunk in _chunks([f"group:{g}" for g in groups]):
        for subject, reviewer, at in session.execute(
            select(col(ReviewRecord.subject), col(ReviewRecord.reviewer), col(ReviewRecord.created_at)).where(
                col(ReviewRecord.stage) == "group_integration", col(ReviewRecord.subject).in_(chunk)
            )
        ):
            group_reviewers.setdefault(subject.removeprefix("group:"), []).append((reviewer, at))
    found: dict[str, list[Exposure]] = {}
    for item in targets:
        group = group_of[item]
        out = [Exposure(a, item, AUTHORED, None) for a in sorted(authors.get(group, ()))]
        out += [Exposure(r, item, GROUP_REVIEW, at) for r, at in sorted(group_reviewers.get(group, []))]
        if out:
            found[item] = out
    for chunk in _chunks([f"item:{i}" for i in targets]):
        for subject, after, at in session.execute(
            select(col(Event.subject), col(Event.after), col(Event.at))
            .where(col(Event.action) == EXPOSED, col(Event.subject).in_(chunk))
            .order_by(col(Event.id))
        ):
            item = subject.removeprefix("item:")
            detail = after or {}
            found.setdefault(item, []).append(Exposure(str(detail.get("person", "")), item, str(detail.get("via")), at))
    return found


def exposed_people(session: Session, item: str) -> set[str]:
    """The people exposed to one item's label (see :func:`exposures`)."""
    return {e.person for e in exposures(session, [item]).get(item, [])}


def exposure_code(exposure: Exposure) -> str:
    """The refusal's rule name: ``exposed:author``, ``exposed:group_review`` or ``exposed:shown``."""
    if exposure.via == AUTHORED:
        return "exposed:author"
    if exposure.via == GROUP_REVIEW:
        return "exposed:group_review"
    return "exposed:shown"


def exposure_refusal(found: Iterable[Exposure], person: str, item: str) -> str | None:
    """Why ``person`` may not do ``item``'s blind check (their first exposure, named), or None."""
    for e in found:
        if e.person == person:
            return (
                f"{exposure_code(e)}: {person!r} has seen the label of {item!r} ({e.via}); "
                "a blind check needs someone who has not"
            )
    return None


def exposed_items(session: Session, person: str, items: Iterable[str]) -> set[str]:
    """The items among ``items`` whose label ``person`` already knows."""
    found = exposures(session, items)
    return {item for item, es in found.items() if any(e.person == person for e in es)}


def reveal(ws: Workspace, person: str, items: Iterable[str], via: str) -> int:
    """Record that a page or export showed ``person`` the labels of ``items`` (their own act, so they are the actor)."""
    with ws.writing() as s:
        return record_exposure(s, person, [person], items, via)


def _chunks(values: list[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]
