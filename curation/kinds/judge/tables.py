"""Storage of the ``judge_task`` kind (migration 0008_judge): tasks, responses, model drafts (the drafting
cache), stage records, judging samples, people's annotations and judges' outputs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class JudgeTask(SQLModel, table=True):
    """An any-to-any task: instruction, input media (modality → asset sha256), wanted output modality."""

    __tablename__ = "judge_task"
    id: str = Field(primary_key=True, max_length=200)
    instruction: str
    inputs: dict[str, str] = Field(sa_column=Column(JSON, nullable=False))
    output: str = Field(max_length=10)
    modality_pair: str = Field(max_length=60)
    source: str = Field(max_length=200)
    license: str = Field(max_length=100)
    content_hash: str = Field(max_length=64)
    created_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)


class JudgeResponse(SQLModel, table=True):
    """One system's output for a task: text, or one medium in the store."""

    __tablename__ = "judge_response"
    id: str = Field(primary_key=True, max_length=200)
    task: str = Field(foreign_key="judge_task.id", index=True, max_length=200)
    system: str = Field(max_length=200)
    modality: str = Field(max_length=10)
    text: str | None = None
    asset: str | None = Field(default=None, foreign_key="asset.sha256")
    content_hash: str = Field(max_length=64)
    created_at: datetime = Field(default_factory=utcnow)


class JudgeDraft(SQLModel, table=True):
    """A model's checklist draft (and the captions it was drafted from): the cache of drafting, keyed by
    what the model saw, the model and the prompt."""

    __tablename__ = "judge_draft"
    __table_args__ = (UniqueConstraint("input_hash", "model", "prompt_sha256", name="uq_judge_draft_key"),)
    id: int | None = Field(default=None, primary_key=True)
    task: str = Field(foreign_key="judge_task.id", index=True, max_length=200)
    input_hash: str = Field(max_length=64)
    model: str = Field(max_length=500)
    prompt_sha256: str = Field(max_length=64)
    output: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class JudgeRecord(SQLModel, table=True):
    """One person's record at a stage on a task (checklist stages) or a response (``response_review``)."""

    __tablename__ = "judge_record"
    __table_args__ = (UniqueConstraint("subject", "stage", "reviewer", name="uq_judge_record_once"),)
    id: int | None = Field(default=None, primary_key=True)
    subject: str = Field(max_length=200, index=True)
    stage: str = Field(max_length=40)
    reviewer: str = Field(foreign_key="person.name")
    payload: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class JudgeSample(SQLModel, table=True):
    """A score or pair sample; ``position`` is the serving order, ``applied`` how many people annotated it."""

    __tablename__ = "judge_sample"
    __table_args__ = (Index("ix_judge_sample_serving", "kind", "position"),)
    id: str = Field(primary_key=True, max_length=300)
    kind: str = Field(max_length=10, description="score or pair")
    position: int
    task: str = Field(foreign_key="judge_task.id", max_length=200)
    payload: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    applied: int = 0


class JudgeAnnotation(SQLModel, table=True):
    """A person's scores or choices on a sample; a draft until applied (Previous/Next keep drafts)."""

    __tablename__ = "judge_annotation"
    __table_args__ = (UniqueConstraint("sample", "annotator", name="uq_judge_annotation_once"),)
    id: int | None = Field(default=None, primary_key=True)
    sample: str = Field(foreign_key="judge_sample.id", index=True, max_length=300)
    annotator: str = Field(foreign_key="person.name", index=True)
    payload: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    applied: bool = False
    updated_at: datetime = Field(default_factory=utcnow)


class JudgeCursor(SQLModel, table=True):
    """Where a person's queue resumes: the position of the sample they last applied."""

    __tablename__ = "judge_cursor"
    person: str = Field(foreign_key="person.name", primary_key=True)
    kind: str = Field(primary_key=True, max_length=10)
    position: int = -1


class JudgeOutput(SQLModel, table=True):
    """A judge model's samples of scores or choices for one sample (several per criterion)."""

    __tablename__ = "judge_output"
    __table_args__ = (UniqueConstraint("sample", "judge", name="uq_judge_output_once"),)
    id: int | None = Field(default=None, primary_key=True)
    sample: str = Field(foreign_key="judge_sample.id", index=True, max_length=300)
    judge: str = Field(max_length=200)
    payload: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
