"""Tables of people's work in progress (migrations 0014_drafts_sessions, 0021_reservations, 0023_sign_in_throttle):
sign-in sessions, which a sign-out, a password change or their expiry ends on the server; drafts of typed forms,
kept per person, page and subject until submitted or discarded; reservations of queue entries
(``curation.reservations``); and the throttle on failed sign-ins per name (``curation.sign_in_throttle``).
None writes events: none changes an item's state."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column
from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class SignInSession(SQLModel, table=True):
    """One signed-in session: its token names its id, and only a session not ended signs anybody in."""

    __tablename__ = "sign_in_session"
    id: str = Field(primary_key=True, max_length=64)
    person: str = Field(foreign_key="person.name", index=True)
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime
    ended_at: datetime | None = None
    ended_why: str | None = Field(default=None, max_length=100)


class Draft(SQLModel, table=True):
    """A person's typed but not submitted work on one form (``page``) for one subject (an item, a group)."""

    __tablename__ = "draft"
    person: str = Field(foreign_key="person.name", primary_key=True)
    page: str = Field(primary_key=True, max_length=100)
    subject: str = Field(primary_key=True, max_length=300)
    payload: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow)


class Reservation(SQLModel, table=True):
    """A queue entry (an item, or a group) held for one person at one stage until ``expires_at``: while it is
    live, queues offer the entry to others only if the stage needs more records than its live holders give."""

    __tablename__ = "reservation"
    subject: str = Field(primary_key=True, max_length=300)
    stage: str = Field(primary_key=True, max_length=100)
    person: str = Field(foreign_key="person.name", primary_key=True)
    expires_at: datetime = Field(index=True)
    created_at: datetime = Field(default_factory=utcnow)


class SignInThrottle(SQLModel, table=True):
    """Recent failed password sign-ins on one typed name, whether or not a person has it (a row for unknown names
    too, so that the throttle does not tell which names exist): no attempt on the name is checked before
    ``next_at``, nor while an attempt let through under the throttle is being checked (``checking_until``: a
    bound, should its process die). An attempt counts as a failure from the moment it is let through until it
    is known to have succeeded (which removes the row); the count is forgotten once ``last_at`` is older than the
    window."""

    __tablename__ = "sign_in_throttle"
    name: str = Field(primary_key=True, max_length=200)
    failures: int = 0
    next_at: datetime
    checking_until: datetime | None = None
    last_at: datetime = Field(index=True)
