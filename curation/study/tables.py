"""The study's tables (created by migration ``0011_story_study``).

``story_study`` fixes what is studied: the release (name, version, manifest hash), the window and how it was
drawn, the tracks, and a snapshot of the window's pages as raters are shown them (so the study outlives
the release folder). ``story_study_judge`` holds the judges' scores. The outputs and the human ratings are a
rating campaign of the same name (the Label Studio bridge's tables).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class StoryStudy(SQLModel, table=True):
    __tablename__ = "story_study"
    name: str = Field(primary_key=True, max_length=200)
    release_name: str = Field(max_length=200)
    release_version: str = Field(max_length=100)
    manifest_sha256: str = Field(max_length=64)
    seed: int | None = Field(default=None, description="the window's draw seed; None when it was named")
    window: list[str] = Field(sa_column=Column(JSON, nullable=False))
    transitions: list[str] = Field(
        sa_column=Column(JSON, nullable=False), description="every transition of the release (the judges' scope)"
    )
    tracks: list[str] = Field(sa_column=Column(JSON, nullable=False))
    systems: list[str] = Field(sa_column=Column(JSON, nullable=False), description="the systems with outputs")
    pages: dict[str, Any] = Field(
        sa_column=Column(JSON, nullable=False), description="transition -> the pages, annotations and media blobs shown"
    )
    created_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)


class StudyJudgeScore(SQLModel, table=True):
    """One judge's scores for one system's output in one track (``scores`` None: no valid answer)."""

    __tablename__ = "story_study_judge"
    __table_args__ = (UniqueConstraint("study", "judge", "system", "transition", "track", name="uq_story_study_judge"),)
    id: int | None = Field(default=None, primary_key=True)
    study: str = Field(foreign_key="story_study.name", index=True, max_length=200)
    judge: str = Field(max_length=200)
    system: str = Field(max_length=200)
    transition: str = Field(max_length=200)
    track: str = Field(max_length=20)
    scores: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    updated_at: datetime = Field(default_factory=utcnow)
