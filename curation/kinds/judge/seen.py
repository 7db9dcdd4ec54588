# SQLModel declares columns as their Python values, so SQL expressions over them read as plain values to mypy;
# the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr,attr-defined"
"""What a judge annotator or curator saw, as a hash: a save names it and is refused (``stale:<stage>``) when the
content changed since the page showed it (design.md, "Exposure and separation"). One digest per page: a sample
(score and pair annotation), a task's checklist candidates (curation and cross-check), a response (review)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from curation.errors import Problem, ValidationFailed
from curation.facts import digest

from .schema import ChecklistEntry
from .tables import JudgeRecord, JudgeResponse, JudgeSample, JudgeTask


def sample_content(s: Any, sample: JudgeSample) -> str:
    """The sample as an annotator sees it: its task, its responses and its task's checklist records."""
    task_hash = s.execute(select(JudgeTask.content_hash).where(JudgeTask.id == sample.task)).scalar()
    responses = s.execute(
        select(JudgeResponse.id, JudgeResponse.content_hash).where(JudgeResponse.task == sample.task)
    ).all()
    checklist = s.execute(
        select(JudgeRecord.stage, JudgeRecord.reviewer, JudgeRecord.payload).where(
            JudgeRecord.subject == sample.task,
            JudgeRecord.stage.startswith("checklist_"),
        )
    ).all()
    return digest(
        "judge_sample",
        sample.id,
        sample.payload,
        task_hash,
        sorted((r[0], r[1]) for r in responses),
        sorted((c[0], c[1], c[2]) for c in checklist),
    )


def checklist_content(task_hash: str, stage: str, candidates: Iterable[ChecklistEntry]) -> str:
    """A task's checklist page as a curator or cross-checker sees it: the task and the entries offered."""
    return digest("judge_checklist", stage, task_hash, sorted((e.id, e.rubric, e.text) for e in candidates))


def response_content(s: Any, response: JudgeResponse) -> str:
    """A response as its reviewer sees it: its task and the response itself."""
    task_hash = s.execute(select(JudgeTask.content_hash).where(JudgeTask.id == response.task)).scalar()
    return digest("judge_response", response.id, task_hash, response.content_hash)


def refuse_if_stale(seen: str | None, now: str, stage: str, what: str) -> None:
    """Refuse a save whose page showed other content than there is now (``seen`` None: the save names none)."""
    if seen is not None and seen != now:
        raise ValidationFailed(
            [
                Problem(
                    f"stale:{stage}: {what} changed since you saw it; nothing was saved: look at it again", "content"
                )
            ],
            "nothing was saved",
        )
