"""Drafts: a person's typed but unsubmitted work on a form, kept on the server per person, page and subject so
that a reload, a crash or another device resumes it; dropped when the work is submitted or discarded.

A draft is no record: it counts for nothing, writes no event (the derived state does not change), and
nobody but its person reads it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlmodel import col

from .errors import Problem, ValidationFailed
from .tables import utcnow
from .work_tables import Draft
from .workspace import Workspace

MAX_DRAFT_CHARS = 200_000
"""A draft larger than this (as JSON) is refused: forms hold a few kilobytes."""


def save_draft(ws: Workspace, person: str, page: str, subject: str, payload: dict[str, Any]) -> None:
    """Keep PERSON's draft of PAGE for SUBJECT (replacing the one before)."""
    import json

    if len(json.dumps(payload, ensure_ascii=False)) > MAX_DRAFT_CHARS:
        raise ValidationFailed([Problem(f"a draft holds at most {MAX_DRAFT_CHARS} characters", "draft")])
    with ws.writing() as s:
        row = s.get(Draft, (person, page, subject))
        if row is None:
            s.add(Draft(person=person, page=page, subject=subject, payload=payload))
        elif row.payload != payload:
            row.payload, row.updated_at = payload, utcnow()
            s.add(row)


def load_draft(ws: Workspace, person: str, page: str, subject: str) -> dict[str, Any] | None:
    with ws.session() as s:
        row = s.get(Draft, (person, page, subject))
        return None if row is None else dict(row.payload)


def discard_draft(ws: Workspace, person: str, page: str, subject: str) -> None:
    with ws.writing() as s:
        s.execute(delete(Draft).where(Draft.person == person, Draft.page == page, Draft.subject == subject))  # type: ignore[arg-type]


def newest_draft(ws: Workspace, person: str, page: str) -> str | None:
    """The subject of PERSON's most recently changed draft of PAGE: where a page that moves from subject to
    subject (the judge queues) resumes after a reload."""
    with ws.session() as s:
        return s.execute(
            select(col(Draft.subject))
            .where(col(Draft.person) == person, col(Draft.page) == page)
            .order_by(col(Draft.updated_at).desc())
            .limit(1)
        ).scalar()
