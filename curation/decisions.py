"""A maintainer's decisions on an item — discard, restore, override a stage — each with its written reason, and
the item's history of events in which they stand beside the reviews and revisions.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlmodel import col

from .errors import NotFoundError, Problem, ValidationFailed
from .kinds import kind_of, stage_names
from .tables import Decision, Event, Item
from .workspace import Workspace, record_event


def decide(
    ws: Workspace,
    item_id: str,
    actor: str,
    kind: str,
    reason: str,
    stage: str | None = None,
    verdict: str | None = None,
) -> None:
    """A maintainer discards, restores or overrides; the written reason is kept as an event."""
    ws.require_role(actor, "maintainer")
    if not reason.strip():
        raise ValidationFailed([Problem("a written reason is required", "reason")])
    if kind == "override" and (stage not in stage_names() or verdict not in ("pass", "fail")):
        raise ValidationFailed([Problem("an override needs --stage STAGE and --verdict pass|fail", "stage")])
    if kind != "override" and (stage is not None or verdict is not None):
        raise ValidationFailed(
            [Problem(f"--stage and --verdict belong to override, not {kind}; leave them out", "stage")]
        )
    with ws.writing() as s:
        item = s.get(Item, item_id)
        if item is None:
            raise NotFoundError(f"no item {item_id!r}")
        _check_decision(s, item, kind, stage)
        s.add(
            Decision(
                item_id=item_id,
                kind=kind,
                stage=stage,
                verdict=verdict,
                reason=reason,
                actor=actor,
                revision=item.revision,
            )
        )
        record_event(
            s,
            actor,
            f"item.{kind}",
            f"item:{item_id}",
            None,
            {"stage": stage, "verdict": verdict, "reason": reason, "revision": item.revision},
        )


def _check_decision(s, item: Item, kind: str, stage: str | None) -> None:  # type: ignore[no-untyped-def]
    """Refuse a decision that would change nothing: an override of a stage the item's kind does not have, or a
    restore of an item that is not discarded."""
    stages = kind_of(item.kind).stage_names
    if kind == "override" and stage not in stages:
        raise ValidationFailed(
            [Problem(f"{stage!r} is not a stage of {item.kind} items like {item.id!r} ({', '.join(stages)})", "stage")]
        )
    if kind == "restore":
        latest = s.execute(
            select(col(Decision.kind))
            .where(col(Decision.item_id) == item.id, col(Decision.kind).in_(["discard", "restore"]))
            .order_by(col(Decision.id).desc())
        ).first()
        if latest is None or latest[0] != "discard":
            raise ValidationFailed([Problem(f"{item.id!r} is not discarded; there is nothing to restore", "item")])


def history(ws: Workspace, item_id: str) -> list[Event]:
    item = ws.item(item_id)
    with ws.session() as s:
        rows = s.execute(
            select(Event)
            .where(col(Event.subject).in_([f"item:{item_id}", f"group:{item.group_id}"]))
            .order_by(col(Event.id))
        ).scalars()
        return list(rows)
