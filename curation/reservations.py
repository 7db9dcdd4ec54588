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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlmodel import col

from .tables import utcnow
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


def claim(
    ws: Workspace,
    stage: str,
    person: str,
    candidates: Sequence[str],
    need: Mapping[str, int],
    prefer: str | None = None,
) -> str | None:
    """Reserve one of CANDIDATES (subjects, in the queue's order) at STAGE for PERSON and return it; None when
    every one is held by as many others as it still needs records (``need``: subject -> records missing).

    ``prefer`` (a subject the person picked) is tried first; otherwise a live reservation the person already
    holds on a candidate is kept (and renewed), then the first candidate nobody holds, then the first with room.
    A person holds one entry per stage: taking another releases the one before."""
    now = utcnow()
    until = now + lease(ws)
    with ws.writing() as s:
        s.execute(delete(Reservation).where(col(Reservation.expires_at) <= now))
        rows = list(s.scalars(select(Reservation).where(col(Reservation.stage) == stage)))
        taken: dict[str, set[str]] = {}
        mine: str | None = None
        for r in rows:
            if r.person == person:
                mine = r.subject
            else:
                taken.setdefault(r.subject, set()).add(r.person)

        def room(subject: str) -> bool:
            return len(taken.get(subject, ())) < need.get(subject, 1)

        wanted = set(candidates)
        order: list[str] = []
        if prefer is not None and prefer in wanted:
            order.append(prefer)
        if mine is not None and mine in wanted:
            order.append(mine)
        order += [c for c in candidates if not taken.get(c)]
        order += [c for c in candidates if taken.get(c)]
        chosen = next((c for c in dict.fromkeys(order) if room(c)), None)
        if chosen is None:
            return None
        if mine is not None and mine != chosen:
            s.execute(
                delete(Reservation).where(
                    col(Reservation.stage) == stage, col(Reservation.person) == person, col(Reservation.subject) == mine
                )
            )
        row = s.get(Reservation, (chosen, stage, person))
        if row is None:
            s.add(Reservation(subject=chosen, stage=stage, person=person, expires_at=until, created_at=now))
        else:
            row.expires_at = until
            s.add(row)
        return chosen


def renew(ws: Workspace, stage: str, person: str, subject: str) -> bool:
    """Extend PERSON's live reservation of SUBJECT at STAGE by a lease; False when they no longer hold it (it
    expired and someone else may have taken it: the page then claims again)."""
    now = utcnow()
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
