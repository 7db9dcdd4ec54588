"""Storage of the caption route and of query draws (migration 0026_judge_captions_draws): captions of media that a
judge or system cannot take, each kept with the model and prompt that wrote it, so every later run reuses it
(App. C.3); and each seeded draw of a query import (§2.1, Table 5)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class JudgeCaption(SQLModel, table=True):
    """The caption of one stored medium (its asset sha256) by one captioning model and prompt."""

    __tablename__ = "judge_caption"
    __table_args__ = (UniqueConstraint("asset", "model", "prompt_sha256", name="uq_judge_caption_key"),)
    id: int | None = Field(default=None, primary_key=True)
    asset: str = Field(max_length=64)
    modality: str = Field(max_length=10)
    model: str = Field(max_length=500)
    prompt_sha256: str = Field(max_length=64)
    caption: str
    created_at: datetime = Field(default_factory=utcnow)


class JudgeQueryDraw(SQLModel, table=True):
    """One seeded draw of an import (migration 0026_judge_captions_draws): the file and its hash, the quotas and
    seed, how many queries were eligible, and the ids drawn; the same file and seed draw the same ids."""

    __tablename__ = "judge_query_draw"
    id: int | None = Field(default=None, primary_key=True)
    file: str = Field(max_length=500)
    file_sha256: str = Field(max_length=64)
    seed: int
    per_task: int | None = None
    per_source: int | None = None
    eligible: int
    drawn: list[str] = Field(sa_column=Column(JSON, nullable=False))
    """The query ids drawn, sorted."""
    held: list[dict[str, str]] = Field(sa_column=Column(JSON, nullable=False))
    """``{"id", "license"}`` of each query held for its licence (imported, never drawn or promoted)."""
    created_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)
