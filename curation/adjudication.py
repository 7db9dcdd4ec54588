"""Adjudicated checklists: the queue of items whose reviewers' checklists disagree, and the maintainer's
consensus checklist that settles one (design.md, "Well-posedness" and "Reviews, groups and gates").

A disagreement whose verdict depends on the combination rule (``any`` and ``majority`` disagree, whichever
rule is configured) holds the item with ``checklist:disagreement``; one that does not only lists it here. A
consensus is a review record of the pseudo-stage :data:`~curation.kinds.ADJUDICATION` on the adjudicable
stage's inputs: Definition 1 over it decides that stage, and a revision that changes those inputs makes it
stale like every other record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError
from sqlalchemy import select
from sqlmodel import col

from .derived import DerivedState, load_derived
from .errors import NotFoundError, Problem, ValidationFailed
from .exposure import record_exposure
from .jsonl import field_name, pydantic_problems, read_json_document
from .kinds import ADJUDICATION, kind_of
from .kinds.mcq.subset_checklist import checklists_differ, rule_verdicts, verdict_depends_on_rule
from .schema import ChecklistReview
from .tables import ReviewRecord
from .vocab import CHECKLIST_VIEWS
from .workspace import Workspace, record_event

STAGE = "subset_checklist"
MAX_CHECKLIST_BYTES = 64 << 10
"""A consensus checklist is eight views of at most eight letters: a larger file is refused unread."""


class _Consensus(BaseModel):
    """``curate adjudicate --checklist FILE``: view -> option keys (under ``consistent``, the form of a checklist
    review record, whose other fields may stay)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    consistent: dict[StrictStr, list[StrictStr]]
    item: StrictStr = ""
    stage: StrictStr = STAGE
    reviewer: StrictStr = ""
    ambiguous: list[StrictStr] | None = None
    note: StrictStr = ""


def read_consensus(path: Path) -> dict[str, list[str]]:
    """The consensus checklist of a JSON file (``{"text": ["A"], ...}`` or a checklist record's
    ``{"consistent": {...}}``), read by the shared reader and refused whole, every problem named by file and field."""
    document = read_json_document(path, MAX_CHECKLIST_BYTES)
    file = str(path)
    if not isinstance(document, dict):
        expected = 'a JSON object of view -> option keys, e.g. {"text": ["A", "B"], ...}'
        raise ValidationFailed([Problem(f"expected {expected}", file=file)], "nothing was recorded")
    try:
        consensus = _Consensus.model_validate(document if "consistent" in document else {"consistent": document})
    except ValidationError as exc:
        problems = pydantic_problems(exc, file, 0)
        if "consistent" not in document:  # the plain form names its views, not consistent.<view>
            problems = [Problem(p.message, p.field.removeprefix("consistent."), file=file) for p in problems]
        raise ValidationFailed([replace(p, line=None) for p in problems], "nothing was recorded") from None
    prefix = "consistent." if "consistent" in document else ""
    unknown = [view for view in consensus.consistent if view not in CHECKLIST_VIEWS]
    if unknown:
        views = ", ".join(CHECKLIST_VIEWS)
        problems = [Problem(f"unknown view; views are {views}", prefix + field_name(v), file=file) for v in unknown]
        raise ValidationFailed(problems, "nothing was recorded")
    return dict(consensus.consistent)


@dataclass(frozen=True)
class ChecklistDispute:
    """An item whose reviewers' checklists differ, with what each rule makes of them."""

    item: str
    group: str
    revision: int
    """The item's revision the checklists were given on: a consensus names it (``--revision``)."""
    state: str
    held: bool
    """The verdict depends on the rule: the item is held with ``checklist:disagreement`` until adjudicated."""
    verdicts: dict[str, list[str]]
    """Rule -> Definition 1's reasons on the sets it combines (empty: well posed)."""
    checklists: dict[str, dict[str, list[str]]]
    """Reviewer -> view -> the options they marked consistent (the records that count)."""
    views: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "group": self.group,
            "revision": self.revision,
            "state": self.state,
            "stage": STAGE,
            "reasons": ["checklist:disagreement"] if self.held else [],
            "held": self.held,
            "verdicts": {rule: reasons or ["well_posed"] for rule, reasons in self.verdicts.items()},
            "checklists": self.checklists,
        }


@dataclass(frozen=True)
class Adjudication:
    """A recorded consensus and what it decided."""

    item: str
    stage: str
    maintainer: str
    consistent: dict[str, list[str]]
    reason: str
    reasons: list[str]
    """Definition 1's reasons on the consensus (empty: the checklist passes)."""
    state: str
    """The item's state afterwards."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "stage": self.stage,
            "maintainer": self.maintainer,
            "consistent": self.consistent,
            "reason": self.reason,
            "verdict": "pass" if not self.reasons else "fail",
            "reasons": self.reasons,
            "state": self.state,
        }


def checklist_disputes(state: DerivedState, combine: str) -> list[ChecklistDispute]:
    """Items (not discarded, not yet adjudicated) whose subset-checklist reviewers differ, once at quorum."""
    out: list[ChecklistDispute] = []
    settings = state.settings
    for item in state.facts.values():
        status = state.status_by_id[item.id]
        kind = kind_of(item.kind)
        if status.state == "discarded" or STAGE not in kind.stage_names:
            continue
        stage = kind.stage(STAGE)
        if not stage.applies(item) or state.consensus(item.id, STAGE) is not None:
            continue
        records = state.records(item.id, STAGE)
        if len(records) < stage.quorum(settings):
            continue
        payloads = [r.payload["consistent"] for r in records]
        views = stage.views(item)
        if not checklists_differ(payloads, views):
            continue
        verdicts = rule_verdicts(payloads, item.answer, item.modalities, views)
        out.append(
            ChecklistDispute(
                item=item.id,
                group=item.group,
                revision=item.revision,
                state=status.state,
                held=verdict_depends_on_rule(verdicts, combine),
                verdicts=verdicts,
                checklists={
                    r.reviewer: {view: sorted(r.payload["consistent"].get(view, [])) for view in views} for r in records
                },
                views=views,
            )
        )
    return out


def adjudication_queue(ws: Workspace, state: DerivedState | None = None) -> list[ChecklistDispute]:
    """The workspace's checklist adjudication queue: held items first, then by item id."""
    state = load_derived(ws) if state is None else state
    disputes = checklist_disputes(state, ws.settings.review.combine)
    return sorted(disputes, key=lambda d: (not d.held, d.item))


def record_adjudication(
    ws: Workspace,
    item_id: str,
    maintainer: str,
    reason: str,
    consistent: Mapping[str, list[str]] | None = None,
    from_reviewer: str | None = None,
    revision: int | None = None,
) -> Adjudication:
    """Record a maintainer's consensus checklist for ITEM (given, or one reviewer's, taken as it is).

    Refused (nothing recorded) without the maintainer role, without a written reason, by the item's author,
    with both or neither of ``consistent`` and ``from_reviewer``, with a checklist the item cannot have, or
    (``stale:adjudication``) when ``revision``, the revision the maintainer saw, is no longer the item's.
    """
    ws.require_role(maintainer, "maintainer")
    problems: list[Problem] = []
    if not reason.strip():
        problems.append(Problem("a written reason is required (why this checklist is the consensus)", "reason"))
    if (consistent is None) == (from_reviewer is None):
        problems.append(Problem("give the consensus checklist or the reviewer whose checklist to take", "checklist"))
    if problems:
        raise ValidationFailed(problems, f"adjudication of {item_id!r} was not recorded")
    state = load_derived(ws)
    item = state.facts.get(item_id)
    if item is None:
        raise NotFoundError(f"no item {item_id!r} in this workspace; `curate status` lists the items")
    if revision is not None and revision != item.revision:
        raise ValidationFailed(
            [
                Problem(
                    f"stale:{ADJUDICATION}: {item_id!r} changed since you saw it (revision {revision}, now "
                    f"{item.revision}); look at it again",
                    "revision",
                )
            ],
            f"adjudication of {item_id!r} was not recorded",
        )
    kind = kind_of(item.kind)
    if STAGE not in kind.stage_names or not kind.stage(STAGE).applies(item):
        raise ValidationFailed([Problem(f"{item_id!r} ({item.kind}) has no subset checklist to adjudicate", "item")])
    if state.status_by_id[item_id].state == "discarded":
        raise ValidationFailed([Problem(f"{item_id!r} is discarded; restore it before adjudicating", "item")])
    stage = kind.stage(STAGE)
    if item.authored_by(maintainer):
        raise ValidationFailed([Problem(f"{maintainer!r} authored {item_id!r} and cannot adjudicate it", "by")])
    disputed = {d.item: d for d in checklist_disputes(state, ws.settings.review.combine)}
    if item_id not in disputed and state.consensus(item_id, STAGE) is None:
        raise ValidationFailed(
            [
                Problem(
                    f"{item_id!r} has no checklist in dispute (its reviewers agree, or fewer than the quorum recorded "
                    "one); `curate adjudicate` lists the queue",
                    "item",
                )
            ]
        )
    disputing = {r.reviewer for r in state.records(item_id, STAGE)}
    if maintainer in disputing:
        raise ValidationFailed(
            [
                Problem(
                    f"{maintainer!r} recorded a checklist of {item_id!r}: a party to the dispute cannot settle it", "by"
                )
            ]
        )
    if from_reviewer is not None:
        taken = {r.reviewer: r.payload["consistent"] for r in state.records(item_id, STAGE)}
        if from_reviewer not in taken:
            known = ", ".join(sorted(taken)) or "none yet"
            raise ValidationFailed(
                [
                    Problem(
                        f"{from_reviewer!r} has no checklist on {item_id!r}'s current content (reviewers: {known})",
                        "from",
                    )
                ]
            )
        consistent = taken[from_reviewer]
    assert consistent is not None
    try:
        review = ChecklistReview.model_validate(
            {"item": item_id, "stage": STAGE, "reviewer": maintainer, "consistent": dict(consistent)}
        )
    except ValidationError as exc:
        raise ValidationFailed(pydantic_problems(exc, "", 0), f"adjudication of {item_id!r} was not recorded") from None
    found = [Problem(message, field) for field, message in stage.record_problems(review, item)]
    if found:
        raise ValidationFailed(found, f"adjudication of {item_id!r} was not recorded")
    chosen = {view: sorted(set(review.consistent[view])) for view in stage.views(item)}
    payload = {"stage": STAGE, "consistent": chosen, "reason": reason.strip(), "from": from_reviewer}
    subject = f"item:{item_id}"
    with ws.writing() as s:
        prior = s.scalars(
            select(ReviewRecord).where(
                col(ReviewRecord.subject) == subject,
                col(ReviewRecord.stage) == ADJUDICATION,
                col(ReviewRecord.reviewer) == maintainer,
                col(ReviewRecord.revision) == item.revision,
            )
        ).first()
        before = None
        if prior is not None:  # replaced by a new row, so that the latest consensus has the highest id
            before = {"revision": prior.revision, **prior.payload}
            s.delete(prior)
            s.flush()
        s.add(
            ReviewRecord(
                subject=subject,
                stage=ADJUDICATION,
                reviewer=maintainer,
                revision=item.revision,
                inputs_hash=stage.inputs(item),
                payload=payload,
                source="adjudication",
            )
        )
        record_event(s, maintainer, "item.adjudicated", subject, before, {"revision": item.revision, **payload})
        # the reviewers' checklists show the answer: the adjudicator can no longer do the item's blind check
        record_exposure(s, maintainer, [maintainer], [item_id], f"adjudicated the checklist of {item_id}")
    outcome = stage.judge_consensus(item, payload, ws.settings.review)
    after = load_derived(ws).status_by_id[item_id].state
    return Adjudication(item_id, STAGE, maintainer, chosen, reason.strip(), outcome.reasons, after)
