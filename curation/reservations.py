"""Reserved work (design.md, "Work distribution"): being offered a queue entry at a stage reserves it for that
person for a lease, so that people on one queue are offered different entries instead of all doing the first
and all but one being refused after the work is done.

A reservation is a row in the store (SQLite or PostgreSQL), so several app processes share it. It is taken in a
write transaction (serialized against other writers), renewed while the person's page is open, and released on
submit (in the transaction that stores the record), skip, sign-out or expiry. A stage with quorum q has at most
q live reservations per entry: an entry is offered to one more person only while the records it still needs
outnumber its live holders.

A reservation is no record: it writes no event and changes no item's state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlmodel import col

from .tables import ReviewRecord, utcnow
from .work_tables import Reservation
from .workspace import Workspace


@dataclass(frozen=True)
class Held:
    """A live reservation."""

    subject: str
    stage: str
    person: str
    expires_at: datetime


def lease(ws: Workspace) -> timedelta:
    return timedelta(minutes=ws.settings.review.reservation_minutes)


def _aware(at: datetime) -> datetime:
    """SQLite gives back naive datetimes (stored as UTC)."""
    from datetime import UTC

    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def live(ws: Workspace, stage: str | None = None) -> list[Held]:
    """Every live reservation (of STAGE, when given), oldest first."""
    now = utcnow()
    query = select(Reservation).where(col(Reservation.expires_at) > now)
    if stage is not None:
        query = query.where(col(Reservation.stage) == stage)
    with ws.session() as s:
        rows = list(s.scalars(query.order_by(col(Reservation.created_at), col(Reservation.subject))))
    return [Held(r.subject, r.stage, r.person, _aware(r.expires_at)) for r in rows]


def holders(ws: Workspace, stage: str) -> dict[str, set[str]]:
    """Subject -> the people holding it at STAGE now."""
    out: dict[str, set[str]] = {}
    for held in live(ws, stage):
        out.setdefault(held.subject, set()).add(held.person)
    return out


@dataclass(frozen=True)
class Wanted:
    """A queue entry as a claim sees it: its subject, its stage's quorum, and the inputs hash its records must
    name to count (the entry's content now)."""

    subject: str
    quorum: int
    inputs: str


@dataclass(frozen=True)
class Claimed:
    """What a claim found: the subject reserved for the person (None: nothing has room), and every candidate
    with room for them, in the order a queue offers them (theirs, then those nobody holds, then the rest)."""

    chosen: str | None
    open: list[str]


def claim_open(
    ws: Workspace, stage: str, person: str, candidates: Sequence[Wanted], prefer: str | None = None
) -> Claimed:
    """Reserve one of CANDIDATES (in the queue's order) at STAGE for PERSON; with every candidate that has room
    for them, judged in the same transaction.

    What an entry still needs is read in that transaction (its quorum less the others' records on its content
    now), not from the caller's derivation, which may predate a record stored a moment ago: an entry someone
    just finished is never handed on. ``prefer`` (a subject the person picked) is tried first; then a live
    reservation the person already holds on a candidate is kept (and renewed), then the first candidate nobody
    holds, then the first with room. A person holds one entry per stage: taking another releases the one before.

    A page redraws often for the same person: when a first look without the write lock finds they keep what
    they hold, with over half its lease left, or that nothing has room, nothing is written (the page's renewal
    extends the lease; the next redraw looks again)."""
    now = utcnow()
    by_subject = {c.subject: c for c in candidates}
    with ws.session() as s:
        look = _decide(s, stage, person, candidates, by_subject, prefer, now)
    if look.chosen is None or (look.chosen == look.mine and not look.renew_due(ws, now)):
        return Claimed(look.chosen, look.free)  # nothing to take, or nothing to change
    with ws.writing() as s:
        s.execute(delete(Reservation).where(col(Reservation.expires_at) <= now))
        found = _decide(s, stage, person, candidates, by_subject, prefer, now)
        if found.chosen is None:
            return Claimed(None, [])
        s.execute(  # one entry per person and stage: whatever else they held here goes back
            delete(Reservation).where(
                col(Reservation.stage) == stage,
                col(Reservation.person) == person,
                col(Reservation.subject) != found.chosen,
            )
        )
        row = s.get(Reservation, (found.chosen, stage, person))
        if row is None:
            s.add(
                Reservation(
                    subject=found.chosen, stage=stage, person=person, expires_at=now + lease(ws), created_at=now
                )
            )
        elif found.renew_due(ws, now):
            row.expires_at = now + lease(ws)
            s.add(row)
        return Claimed(found.chosen, found.free)


@dataclass(frozen=True)
class _Decision:
    chosen: str | None
    free: list[str]
    mine: str | None
    """The candidate the person holds now, if any."""
    mine_expires: datetime | None

    def renew_due(self, ws: Workspace, now: datetime) -> bool:
        return self.mine_expires is None or self.mine_expires - now < lease(ws) / 2


def _decide(  # type: ignore[no-untyped-def]
    s,
    stage: str,
    person: str,
    candidates: Sequence[Wanted],
    by_subject: dict[str, Wanted],
    prefer: str | None,
    now: datetime,
) -> _Decision:
    """What a claim would take, from the live reservations and records read in session S."""
    rows = list(
        s.scalars(select(Reservation).where(col(Reservation.stage) == stage, col(Reservation.expires_at) > now))
    )
    taken: dict[str, set[str]] = {}
    mine: str | None = None
    mine_expires: datetime | None = None
    for r in rows:
        if r.person == person:
            if r.subject in by_subject:
                mine, mine_expires = r.subject, _aware(r.expires_at)
        else:
            taken.setdefault(r.subject, set()).add(r.person)
    recorded: dict[str, set[str]] = {}
    subjects = sorted(by_subject)
    for start in range(0, len(subjects), 500):
        chunk = subjects[start : start + 500]
        for subject, reviewer, inputs in s.execute(
            select(col(ReviewRecord.subject), col(ReviewRecord.reviewer), col(ReviewRecord.inputs_hash)).where(
                col(ReviewRecord.stage) == stage, col(ReviewRecord.subject).in_(chunk)
            )
        ):
            if inputs == by_subject[subject].inputs:
                recorded.setdefault(subject, set()).add(reviewer)

    def room(subject: str) -> bool:
        done = recorded.get(subject, set())
        if person in done:
            return False
        return len(taken.get(subject, set()) - done) < by_subject[subject].quorum - len(done)

    order: list[str] = []
    if prefer is not None and prefer in by_subject:
        order.append(prefer)
    if mine is not None:
        order.append(mine)
    order += [c.subject for c in candidates if not taken.get(c.subject)]
    order += [c.subject for c in candidates if taken.get(c.subject)]
    free = [c for c in dict.fromkeys(order) if room(c)]
    chosen = free[0] if free else None
    return _Decision(chosen, free, mine, mine_expires if chosen == mine else None)


def renew(ws: Workspace, stage: str, person: str, subject: str) -> bool:
    """Extend PERSON's live reservation of SUBJECT at STAGE by a lease; False when they no longer hold it (it
    expired and someone else may have taken it: the page then claims again).

    A page renews on every redraw and every third of a lease: with over half its lease left, the reservation is
    kept as it is and nothing is written (on SQLite a write waits for every other writer; with eight people on one
    queue these renewals were a sixth of the pages' time). A renewal a third of a lease later then finds it due."""
    now = utcnow()
    with ws.session() as s:
        held = s.get(Reservation, (subject, stage, person))
        if held is None or _aware(held.expires_at) <= now:
            return False
        if _aware(held.expires_at) - now >= lease(ws) / 2:
            return True
    with ws.writing() as s:
        row = s.get(Reservation, (subject, stage, person))
        if row is None or _aware(row.expires_at) <= now:
            return False
        row.expires_at = now + lease(ws)
        s.add(row)
        return True


def release(ws: Workspace, person: str, stage: str | None = None, subject: str | None = None) -> int:
    """Release PERSON's reservations (of STAGE, of SUBJECT, when given): a skip, a sign-out. Returns how many."""
    with ws.writing() as s:
        return release_in(s, person, stage, subject)


def release_in(s, person: str, stage: str | None = None, subject: str | None = None) -> int:  # type: ignore[no-untyped-def]
    """:func:`release` inside a caller's transaction (recording a review releases what it fulfils)."""
    query = delete(Reservation).where(col(Reservation.person) == person)
    if stage is not None:
        query = query.where(col(Reservation.stage) == stage)
    if subject is not None:
        query = query.where(col(Reservation.subject) == subject)
    return int(s.execute(query).rowcount or 0)
