"""What a page says when someone else's work got there first: why the entry a person has open no longer waits
for them (who recorded what, and when; what state it is in now). Plain functions, no Streamlit.

Pages keep the entry a person picked on screen with their typed input (``components.review_queue``), say this,
and move on only when the person asks: a page that jumped to the next entry would lose the input and, on pages
that show labels, expose the next one.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlmodel import col

from curation.exposure import exposed_items
from curation.kinds import ADJUDICATION, GroupStage, stage_named
from curation.tables import ReviewRecord
from curation.workspace import Workspace

from .snapshot import Snapshot


def subject_of(stage: str, ident: str) -> str:
    """``group:ID`` for a group stage, ``item:ID`` otherwise."""
    return f"group:{ident}" if isinstance(stage_named(stage), GroupStage) else f"item:{ident}"


def stage_title(stage: str) -> str:
    if stage == ADJUDICATION:
        return "consensus checklist"
    found = stage_named(stage)
    return found.page.title.lower() if found is not None and found.page is not None else stage


def why_not_waiting(ws: Workspace, snap: Snapshot, stage: str, ident: str, person: str) -> str:
    """One sentence on why IDENT (an item or group) left PERSON's queue at STAGE since their page showed it; at
    a blind stage only that it no longer needs them (another checker's name or outcome would hint at the label)."""
    subject = subject_of(stage, ident)
    with ws.session() as s:
        rows = list(
            s.scalars(
                select(ReviewRecord)
                .where(col(ReviewRecord.subject) == subject, col(ReviewRecord.stage) == stage)
                .order_by(col(ReviewRecord.updated_at).desc(), col(ReviewRecord.id).desc())
            )
        )
    what = stage_title(stage)
    mine = next((r for r in rows if r.reviewer == person), None)
    other = next((r for r in rows if r.reviewer != person), None)
    found = stage_named(stage)
    if (
        found is not None
        and found.blind
        and (mine is None or (other is not None and other.updated_at > mine.updated_at))
    ):
        # blind means blind: not who else checked it, nor what the item's state (and so their answer) became
        return f"{ident} no longer needs your {what}: nothing more is needed from you there."
    if mine is not None and (other is None or mine.updated_at >= other.updated_at):
        who = f"you already recorded the {what} of {ident} at {mine.updated_at:%H:%M:%S} (in another tab or window)"
    elif other is not None:
        who = f"{other.reviewer} recorded the {what} of {ident} at {other.updated_at:%H:%M:%S}"
    else:
        who = f"{ident} changed"
    status = snap.status_by_id.get(ident)
    if status is not None:
        now = f"it is now {status.state}" + (f" at {status.stage}" if status.stage else "")
        if status.reasons:
            now += f" ({', '.join(status.reasons)})"
    elif subject.startswith("group:"):
        now = "the group no longer waits for a review from you"
    else:
        now = "it is no longer in this workspace"
    return f"{ident} no longer waits for you here: {who}; {now}."


def exposed_since(ws: Workspace, stage: str, ident: str, person: str) -> bool:
    """Whether IDENT left PERSON's queue at a blind STAGE because they saw its label (their own doing: there
    is nothing to hold for them)."""
    found = stage_named(stage)
    if found is None or not found.blind:
        return False
    with ws.session() as s:
        return ident in exposed_items(s, person, [ident])
