"""Tables of the two references a benchmark is read against (created by migration ``0025_transcripts_baseline``).

``audio_transcript``: a speech-to-text model's transcript of one clip (TRIAD G.6: models without native audio
read it), one row per clip and model, so a rerun with the same model skips the clip and a second model adds a
row beside the first. ``baseline_*``: the human baseline campaign (TRIAD §5.1, Table 7): the seeded stratified
subset, who answers what, the answers in both forms and the grades of the open-ended ones.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from .tables import utcnow


class AudioTranscript(SQLModel, table=True):
    __tablename__ = "audio_transcript"
    audio_sha256: str = Field(primary_key=True, foreign_key="asset.sha256", max_length=64)
    model: str = Field(primary_key=True, max_length=300, description="the speech-to-text model's id")
    backend: str = Field(max_length=30, description="whisper, openai or replay")
    text: str = Field(description="the transcript as the model gave it (stripped of surrounding space)")
    language: str | None = Field(default=None, max_length=20, description="the language asked for, if any")
    created_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)


class BaselineCampaign(SQLModel, table=True):
    __tablename__ = "baseline_campaign"
    name: str = Field(primary_key=True, max_length=200)
    seed: int
    size: int = Field(description="the subset's size as asked; fewer when the pool is smaller")
    raters_per_item: int
    forms: list[str] = Field(sa_column=Column(JSON, nullable=False), description="open and/or standard")
    items: list[str] = Field(sa_column=Column(JSON, nullable=False), description="the subset, in draw order")
    pool: list[str] = Field(sa_column=Column(JSON, nullable=False), description="the items the subset was drawn from")
    strata: list[dict[str, Any]] = Field(
        sa_column=Column(JSON, nullable=False), description="per stratum: key, population, quota, drawn"
    )
    created_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)


class BaselineAssignment(SQLModel, table=True):
    __tablename__ = "baseline_assignment"
    __table_args__ = (UniqueConstraint("campaign", "item_id", "rater", name="uq_baseline_assignment"),)
    id: int | None = Field(default=None, primary_key=True)
    campaign: str = Field(foreign_key="baseline_campaign.name", index=True, max_length=200)
    item_id: str = Field(foreign_key="item.id", max_length=200)
    rater: str = Field(foreign_key="person.name", max_length=200)


class BaselineAnswer(SQLModel, table=True):
    __tablename__ = "baseline_answer"
    __table_args__ = (UniqueConstraint("campaign", "item_id", "rater", "form", name="uq_baseline_answer"),)
    id: int | None = Field(default=None, primary_key=True)
    campaign: str = Field(foreign_key="baseline_campaign.name", index=True, max_length=200)
    item_id: str = Field(foreign_key="item.id", max_length=200)
    rater: str = Field(foreign_key="person.name", max_length=200)
    form: str = Field(max_length=10, description="standard (an option key) or open (free text)")
    answer: str = Field(description="the option key, or the free-form answer as typed")
    content_hash: str = Field(max_length=64, description="the item content the rater saw")
    source: str = Field(default="app", max_length=30, description="app, import or labelstudio")
    created_at: datetime = Field(default_factory=utcnow)


class BaselineGrade(SQLModel, table=True):
    """One grader's verdict on one open-ended answer: a person's name, or ``judge:<model>`` for a judge backend."""

    __tablename__ = "baseline_grade"
    __table_args__ = (UniqueConstraint("answer_id", "grader", name="uq_baseline_grade"),)
    id: int | None = Field(default=None, primary_key=True)
    answer_id: int = Field(foreign_key="baseline_answer.id", index=True)
    grader: str = Field(max_length=300)
    correct: bool
    created_at: datetime = Field(default_factory=utcnow)
