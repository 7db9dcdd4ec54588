"""Withdrawing a screener's ``query_screen`` record when what made it is gone (an annotation deleted, or edited
and refused, in Label Studio): the query waits for a screener again. A refinement is not undone — the wording
it made is the query's history, and its record says who and why."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import col

from curation.workspace import Workspace, record_event

from .query_tables import JudgeQuery
from .tables import JudgeRecord


@dataclass(frozen=True)
class ScreenWithdrawal:
    query: str
    reviewer: str
    why: str


def withdraw_screens(ws: Workspace, withdrawals: list[ScreenWithdrawal], actor: str) -> int:
    """Delete each screener's screening record of a query not yet promoted, in one transaction; returns how many."""
    done = 0
    with ws.writing() as s:
        for w in withdrawals:
            query = s.get(JudgeQuery, w.query)
            if query is None or query.task is not None:  # a promoted query keeps the screening it was promoted on
                continue
            row = s.execute(
                select(JudgeRecord).where(
                    col(JudgeRecord.subject) == w.query,
                    col(JudgeRecord.stage) == "query_screen",
                    col(JudgeRecord.reviewer) == w.reviewer,
                )
            ).scalar_one_or_none()
            if row is None:
                continue
            record_event(
                s, actor, "judge.query_screen_withdrawn", f"judge_query:{w.query}", row.payload, {"why": w.why}
            )
            s.delete(row)
            done += 1
    return done
