"""Candidates as light rows, and each screening step's outcome per candidate.

A candidate holds text and media *paths* only: media are hashed and probed lazily by the steps that need
them (so 91,449 transitions import in seconds), and copied into the content-addressed store only when a
candidate is promoted to a benchmark item.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Text
from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class Candidate(SQLModel, table=True):
    __tablename__ = "candidate"
    id: str = Field(primary_key=True, max_length=200)
    book: str = Field(max_length=200, index=True)
    page: int
    title: str = ""
    collection: str = Field(max_length=100)
    license: str = Field(max_length=100)
    source_url: str = ""
    current_text: str = Field(sa_column=Column(Text, nullable=False))
    next_text: str = Field(sa_column=Column(Text, nullable=False))
    current_image: str = Field(description="absolute path, resolved from the JSONL's folder at import")
    next_image: str
    speech_lines: list[str] | None = Field(default=None, sa_column=Column(JSON))
    annotations: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    origin: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    """Provenance per page (:class:`curation.screening.schema.Origin`), from ``curate import books``."""
    line_hash: str = Field(max_length=64, description="of the canonical line: re-importing it changes nothing")
    imported_at: datetime = Field(default_factory=utcnow)


class ScreenResult(SQLModel, table=True):
    """One step's outcome on one candidate, valid while its ``key`` (step settings + input) is unchanged."""

    __tablename__ = "screen_result"
    __table_args__ = (Index("ix_screen_result_step", "step", "outcome"),)
    candidate_id: str = Field(foreign_key="candidate.id", primary_key=True, max_length=200)
    step: str = Field(primary_key=True, max_length=40)
    key: str = Field(max_length=64, description="hash of the step's settings and the candidate's line")
    outcome: str = Field(max_length=10, description="keep or drop")
    reason: str = Field(default="", max_length=100, description="a stable reason code when dropped")
    data: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    updated_at: datetime = Field(default_factory=utcnow)
