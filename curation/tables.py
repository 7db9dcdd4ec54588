"""SQLModel tables: the one store every part of omnicurate reads and writes.

The schema is created and upgraded only by the migrations in ``curation/migrations``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


class Person(SQLModel, table=True):
    __tablename__ = "person"
    name: str = Field(primary_key=True, max_length=200)
    roles: str = Field(description="comma-separated, sorted: author, maintainer, reviewer")
    email: str | None = Field(default=None, max_length=320)
    password_hash: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    languages: str = Field(
        default="", max_length=200, description="comma-separated, sorted language tags read; empty: any"
    )
    can: str = Field(default="", max_length=500, description="comma-separated, sorted stages qualified for")

    @property
    def role_set(self) -> set[str]:
        return set(filter(None, self.roles.split(",")))

    @property
    def language_set(self) -> set[str]:
        return set(filter(None, self.languages.split(",")))

    @property
    def can_set(self) -> set[str]:
        return set(filter(None, self.can.split(",")))


class SceneGroup(SQLModel, table=True):
    __tablename__ = "scene_group"
    id: str = Field(primary_key=True, max_length=200)
    perturbed: str = Field(max_length=10)
    created_at: datetime = Field(default_factory=utcnow)


class Asset(SQLModel, table=True):
    """A medium in the content-addressed store; derivatives point at their original."""

    __tablename__ = "asset"
    sha256: str = Field(primary_key=True, max_length=64)
    kind: str = Field(max_length=10, description="image or audio")
    mime: str = Field(max_length=100)
    ext: str = Field(max_length=10)
    size_bytes: int
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None
    sample_rate: int | None = None
    channels: int | None = None
    original_name: str = ""
    provenance: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    derived_from: str | None = Field(default=None, foreign_key="asset.sha256", index=True)
    transform: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    created_at: datetime = Field(default_factory=utcnow)


class Item(SQLModel, table=True):
    """The current revision of an item; earlier revisions live in ``item_revision``."""

    __tablename__ = "item"
    id: str = Field(primary_key=True, max_length=200)
    group_id: str = Field(foreign_key="scene_group.id", index=True, max_length=200)
    revision: int = 1
    author: str = Field(foreign_key="person.name", index=True)
    language: str = Field(max_length=20)
    kind: str = Field(default="mcq", max_length=30, description="the benchmark kind (curation.kinds)")
    modalities: list[str] | None = Field(
        default=None, sa_column=Column(JSON), description="the item's modalities; NULL means all three"
    )
    context: str = Field(description="the text modality; empty when the item has no text")
    question: str
    options: dict[str, str] = Field(sa_column=Column(JSON, nullable=False))
    answer: str = Field(max_length=1)
    taxonomy: dict[str, str] = Field(sa_column=Column(JSON, nullable=False))
    ambiguous: list[str] = Field(sa_column=Column(JSON, nullable=False))
    image: str | None = Field(default=None, foreign_key="asset.sha256")
    audio: str | None = Field(default=None, foreign_key="asset.sha256")
    provenance: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    content_hash: str = Field(max_length=64)
    extra: dict[str, Any] | None = Field(
        default=None,
        sa_column=Column(JSON),
        description="a kind's own fields (story_transition: next page, annotations)",
    )
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class ItemRevision(SQLModel, table=True):
    __tablename__ = "item_revision"
    item_id: str = Field(foreign_key="item.id", primary_key=True, max_length=200)
    revision: int = Field(primary_key=True)
    content: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    content_hash: str = Field(max_length=64)
    created_by: str
    created_at: datetime = Field(default_factory=utcnow)


class ReviewRecord(SQLModel, table=True):
    """One reviewer's decision at one stage on one item revision (or one group)."""

    __tablename__ = "review_record"
    __table_args__ = (
        UniqueConstraint("subject", "stage", "reviewer", "revision", name="uq_review_once"),
        Index("ix_review_subject", "subject"),
    )
    id: int | None = Field(default=None, primary_key=True)
    subject: str = Field(max_length=210, description="item:<id> or group:<id>")
    stage: str = Field(max_length=30)
    reviewer: str = Field(foreign_key="person.name")
    revision: int = Field(description="item revision reviewed; 0 for group records")
    inputs_hash: str = Field(max_length=64, description="hash of what the stage judged; a change invalidates")
    payload: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    source: str = Field(default="import", max_length=50)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class Decision(SQLModel, table=True):
    """A maintainer's decision on an item: discard, restore, or override of a stage verdict."""

    __tablename__ = "decision"
    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", index=True)
    kind: str = Field(max_length=20, description="discard, restore or override")
    stage: str | None = Field(default=None, max_length=30)
    verdict: str | None = Field(default=None, max_length=10)
    reason: str
    actor: str = Field(foreign_key="person.name")
    revision: int
    created_at: datetime = Field(default_factory=utcnow)


class Event(SQLModel, table=True):
    """Every state change: who, when, what, before and after. Never updated or deleted."""

    __tablename__ = "event"
    id: int | None = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=utcnow, index=True)
    actor: str = Field(max_length=200)
    action: str = Field(max_length=60)
    subject: str = Field(max_length=210, index=True)
    before: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    after: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))


class GateResult(SQLModel, table=True):
    """The latest result of one item-level gate (media, audit, probe) on one item's content."""

    __tablename__ = "gate_result"
    item_id: str = Field(foreign_key="item.id", primary_key=True, max_length=200)
    gate: str = Field(primary_key=True, max_length=30)
    content_hash: str = Field(max_length=64, description="the item content the gate judged; stale otherwise")
    reasons: list[str] = Field(sa_column=Column(JSON, nullable=False))
    blocking: bool = True
    details: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    updated_at: datetime = Field(default_factory=utcnow)


class StoreCheck(SQLModel, table=True):
    """When a media store file's bytes last matched its name, and what its file looked like then.

    ``curation.store_checks``: a release build hashes a store file again only when this differs (or is
    missing), as git does with its index: any write to the file changes its change time."""

    __tablename__ = "store_check"
    sha256: str = Field(primary_key=True, max_length=64)
    stat: str = Field(max_length=200, description="device:inode:size:mtime_ns:ctime_ns of the checked file")
    checked_at: datetime = Field(default_factory=utcnow)
