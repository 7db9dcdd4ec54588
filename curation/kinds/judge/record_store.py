# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""People's stage records (``judge_record``): checklist curation, the blind cross-check, a maintainer's
adjudication and response reviews, each checked against its rules before it is kept, and the checklist
state and usable responses derived from them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from curation.errors import NotFoundError, PermissionDenied, Problem, ValidationFailed
from curation.tables import Person, utcnow
from curation.workspace import Workspace, record_event

from .checklists import (
    ChecklistBounds,
    TaskChecklist,
    apply_curation,
    check_adjudication,
    check_crosscheck,
    derive_task_checklist,
)
from .draft_store import drafted_candidates
from .samples import UsableResponse
from .schema import ChecklistAdjudicationRecord, ChecklistSelectionRecord, ResponseReviewRecord
from .seen import checklist_content, refuse_if_stale, response_content
from .tables import JudgeRecord, JudgeResponse
from .task_store import responses, task, tasks

ADJUDICATION = "checklist_adjudication"


def bounds(ws: Workspace) -> ChecklistBounds:
    return ChecklistBounds(ws.settings.judge.checklist_min, ws.settings.judge.checklist_max)


def _require_reviewer(s, name: str) -> None:  # type: ignore[no-untyped-def]
    person = s.get(Person, name)
    if person is None:
        raise NotFoundError(f"unknown person {name!r}; add them with `curate people add {name} --role reviewer`")
    if not person.role_set & {"reviewer", "maintainer"}:
        raise PermissionDenied(f"{name!r} has neither the reviewer nor the maintainer role")


def _put_record(s, subject: str, stage: str, reviewer: str, payload: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    row = s.execute(
        select(JudgeRecord).where(
            JudgeRecord.subject == subject, JudgeRecord.stage == stage, JudgeRecord.reviewer == reviewer
        )
    ).scalar_one_or_none()
    before = None if row is None else row.payload
    if row is None:
        s.add(JudgeRecord(subject=subject, stage=stage, reviewer=reviewer, payload=payload))
    elif row.payload != payload:
        row.payload, row.updated_at = payload, utcnow()
        s.add(row)
    else:
        return
    record_event(s, reviewer, f"judge.{stage}", f"judge_task:{subject}", before, payload)


def _records(s, subject: str | None = None) -> list[JudgeRecord]:  # type: ignore[no-untyped-def]
    query = select(JudgeRecord).order_by(JudgeRecord.id)
    if subject is not None:
        query = query.where(JudgeRecord.subject == subject)
    return list(s.execute(query).scalars())


def _task_checklist(ws: Workspace, task_id: str, records: Sequence[JudgeRecord]) -> TaskChecklist:
    payloads = {r.stage: r.payload for r in records}
    if not payloads:
        return TaskChecklist(task_id)
    return derive_task_checklist(task_id, drafted_candidates(ws, task_id), payloads)


def task_checklist(ws: Workspace, task_id: str) -> TaskChecklist:
    with ws.session() as s:
        records = [r for r in _records(s, task_id) if r.stage.startswith("checklist_")]
    return _task_checklist(ws, task_id, records)


def task_checklists(ws: Workspace) -> list[TaskChecklist]:
    with ws.session() as s:
        records = [r for r in _records(s) if r.stage.startswith("checklist_")]
    by_task: dict[str, list[JudgeRecord]] = {}
    for r in records:
        by_task.setdefault(r.subject, []).append(r)
    return [_task_checklist(ws, t.id, by_task.get(t.id, [])) for t in tasks(ws)]


def selection_seen(ws: Workspace, task_id: str, stage: str) -> str:
    """What the curation or cross-check page shows of a task (what a save names as ``seen``): the task and the
    entries offered — the drafted ones to a curator; the curated candidates to a cross-checker (blind: not the
    curator's choice, so a re-curation that only chooses otherwise changes nothing a cross-checker saw)."""
    found = task(ws, task_id)
    if stage == "checklist_curation":
        candidates = drafted_candidates(ws, task_id)
    else:
        curation = task_checklist(ws, task_id).curation
        candidates = [] if curation is None else curation.candidates
    return checklist_content(found.content_hash, stage, candidates)


def record_selection(ws: Workspace, record: ChecklistSelectionRecord, seen: str | None = None) -> TaskChecklist:
    """Record a curation or a cross-check (a new record from the same person replaces theirs).

    ``seen`` (:func:`selection_seen`, what the page showed) makes a save on a task whose candidates changed since
    (another draft, the curator's rewrite) ``stale:<stage>``; None (record files) checks nothing."""
    task(ws, record.task)
    limits = bounds(ws)
    with ws.writing() as s:  # read under the write lock (taken here): nobody changes the checklist meanwhile
        _require_reviewer(s, record.reviewer)
        if seen is not None:
            what = f"the checklist candidates of task {record.task}"
            refuse_if_stale(seen, selection_seen(ws, record.task, record.stage), record.stage, what)
        current = task_checklist(ws, record.task)
        if record.stage == "checklist_curation":
            candidates = drafted_candidates(ws, record.task)
            if not candidates:
                raise ValidationFailed(
                    [Problem(f"task {record.task} has no drafted checklist yet; draft one first", "task")]
                )
            if current.crosscheck is not None and current.crosscheck.reviewer == record.reviewer:
                raise PermissionDenied(f"{record.reviewer} cross-checked task {record.task} and cannot curate it")
            apply_curation(candidates, record, limits)
        else:
            if current.curation is None:
                raise ValidationFailed([Problem(f"task {record.task} has no curated checklist to cross-check", "task")])
            check_crosscheck(current.curation, record, limits)
        for other in _records(s, record.task):
            if other.stage == record.stage and other.reviewer != record.reviewer:
                raise ValidationFailed(
                    [Problem(f"{other.reviewer} already recorded the {record.stage} of task {record.task}", "reviewer")]
                )
        _put_record(s, record.task, record.stage, record.reviewer, record.model_dump(mode="json"))
    return task_checklist(ws, record.task)


def record_adjudication(ws: Workspace, record: ChecklistAdjudicationRecord) -> TaskChecklist:
    current = task_checklist(ws, record.task)
    check_adjudication(current, record, bounds(ws))
    with ws.writing() as s:
        person = s.get(Person, record.adjudicator)
        if person is None or "maintainer" not in person.role_set:
            raise PermissionDenied(f"{record.adjudicator!r} is not a maintainer; only maintainers adjudicate")
        _put_record(s, record.task, ADJUDICATION, record.adjudicator, record.model_dump(mode="json"))
    return task_checklist(ws, record.task)


def response_seen(ws: Workspace, response_id: str) -> str:
    """What the response review page shows of a response (what a review names as ``seen``)."""
    with ws.session() as s:
        response = s.get(JudgeResponse, response_id)
        if response is None:
            raise NotFoundError(f"no response {response_id!r}")
        return response_content(s, response)


def record_response_review(ws: Workspace, record: ResponseReviewRecord, seen: str | None = None) -> None:
    """Record one person's review of a response; ``seen`` (:func:`response_seen`, what the page showed) makes a
    review of a response or task stored with other content since ``stale:response_review``."""
    with ws.writing() as s:
        _require_reviewer(s, record.reviewer)
        response = s.get(JudgeResponse, record.response)
        if response is None:
            raise NotFoundError(f"no response {record.response!r}")
        if seen is not None:
            refuse_if_stale(seen, response_content(s, response), "response_review", f"response {record.response}")
        _put_record(s, record.response, "response_review", record.reviewer, record.model_dump(mode="json"))


def response_reviews(ws: Workspace) -> dict[str, list[ResponseReviewRecord]]:
    with ws.session() as s:
        rows = s.execute(select(JudgeRecord).where(JudgeRecord.stage == "response_review")).scalars()
        out: dict[str, list[ResponseReviewRecord]] = {}
        for row in rows:
            out.setdefault(row.subject, []).append(ResponseReviewRecord.model_validate(row.payload))
    return out


def usable_responses(ws: Workspace) -> list[UsableResponse]:
    """Responses reviewed at least once and judged usable by every reviewer (none NSFW)."""
    reviews = response_reviews(ws)
    return [
        UsableResponse(r.id, r.task, r.system)
        for r in responses(ws)
        if reviews.get(r.id) and all(v.usable and not v.nsfw for v in reviews[r.id])
    ]
