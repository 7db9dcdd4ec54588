"""The release table: what makes a published version immutable and its date reproducible."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class Release(SQLModel, table=True):
    """A version as first published: rebuilding it must give the same manifest digest."""

    __tablename__ = "release"
    version: str = Field(primary_key=True, max_length=100)
    release_date: str = Field(max_length=10, description="YYYY-MM-DD, fixed at the first build")
    manifest_sha256: str = Field(max_length=64, description="SHA-256 of manifest.json: the release's content")
    items: int
    partial: bool = False
    path: str = Field(description="where it was first built")
    built_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)
