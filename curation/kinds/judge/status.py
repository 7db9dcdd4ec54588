"""Where each judge task stands (``curate status``, ``curate funnel``), derived from its stage records."""

from __future__ import annotations

from typing import Any

from curation.workspace import Workspace

from .record_store import response_reviews, task_checklists
from .task_store import responses


def task_status(ws: Workspace) -> list[dict[str, Any]]:
    """One row per task, shaped like ``curate status --json`` rows: a task waits at a checklist stage, is
    held while its curator and cross-checker disagree (``checklist:disagreement``, until adjudicated),
    waits at ``response_review`` while a response is unreviewed, and is admitted with a final checklist and
    at least one usable response (``responses:none_usable`` holds it otherwise)."""
    reviews = response_reviews(ws)
    by_task: dict[str, list[str]] = {}
    for r in responses(ws):
        by_task.setdefault(r.task, []).append(r.id)
    rows = []
    for checklist in task_checklists(ws):
        state, stage, reasons = "in_review", None, []
        if checklist.state == "drafted":
            stage = "checklist_curation"
        elif checklist.state == "curated":
            stage = "checklist_crosscheck"
        elif checklist.state == "disagreement":
            state, reasons = "held", ["checklist:disagreement"]
        else:
            mine = by_task.get(checklist.task, [])
            if not mine or any(not reviews.get(r) for r in mine):
                stage = "response_review"
            elif any(all(v.usable and not v.nsfw for v in reviews[r]) for r in mine):
                state = "admitted"
            else:
                state, reasons = "held", ["responses:none_usable"]
        rows.append(
            {
                "id": checklist.task,
                "group": checklist.task,
                "kind": "judge_task",
                "state": state,
                "stage": stage,
                "reasons": reasons,
            }
        )
    return rows


def judge_statuses(ws: Workspace) -> list[Any]:
    """:func:`task_status` as the workflow's ``ItemStatus`` rows, for ``curate status`` and ``curate funnel``."""
    from curation.workflow import ItemStatus

    return [ItemStatus(r["id"], r["group"], r["state"], r["stage"], r["reasons"], r["kind"]) for r in task_status(ws)]
