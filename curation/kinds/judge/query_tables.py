"""Storage of query curation (migration 0017_judge_queries): the candidate queries a judge_task benchmark
is made from, before they become tasks (Judge Anything §2.1). Screening and refinement records are
``judge_record`` rows (stages ``query_screen`` and ``query_refine``) whose subject is the query."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Column
from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class JudgeQuery(SQLModel, table=True):
    """A candidate query from an existing benchmark: its current (refined) instruction, input media (modality
    → asset sha256), wanted output, source and licence; ``task`` once it became a judge task."""

    __tablename__ = "judge_query"
    id: str = Field(primary_key=True, max_length=200)
    instruction: str
    original: str
    """The instruction as imported (refinements change ``instruction``; their records say who and why)."""
    inputs: dict[str, str] = Field(sa_column=Column(JSON, nullable=False))
    output: str = Field(max_length=10)
    source: str = Field(max_length=200)
    license: str = Field(max_length=100)
    content_hash: str = Field(max_length=64)
    revision: int = 0
    task: str | None = Field(default=None, max_length=200)
    created_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)
