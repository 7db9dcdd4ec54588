"""Tables of the Label Studio bridge (created by migration ``0002_labelstudio``).

``ls_project`` and ``ls_task`` remember what was pushed where (and the hash of each task's data), so that pushing
again adds no duplicate and a pulled annotation is judged against what its task showed. ``ls_annotation`` keeps the outcome of every pulled
annotation: skips are kept here as skips (never as votes), refusals with their reason. Rating campaigns rate
model outputs, not items, so their ratings live in ``campaign_rating``, not among review records.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class LsProject(SQLModel, table=True):
    """A project on the server: ``stage:<stage>`` or ``campaign:<name>``."""

    __tablename__ = "ls_project"
    key: str = Field(primary_key=True, max_length=250)
    server_url: str = Field(max_length=500)
    project_id: int
    title: str = Field(max_length=250)
    created_at: datetime = Field(default_factory=utcnow)


class LsTask(SQLModel, table=True):
    """One pushed task: what it shows (``ref``) and the inputs hash of what it shows."""

    __tablename__ = "ls_task"
    __table_args__ = (UniqueConstraint("project_key", "task_id", name="uq_ls_task"),)
    id: int | None = Field(default=None, primary_key=True)
    project_key: str = Field(foreign_key="ls_project.key", index=True, max_length=250)
    task_id: int
    ref: str = Field(max_length=400, description="stable key of what the task shows, also in the task's data")
    subject: str = Field(max_length=210, description="item:<id>, group:<id> or unit:<id>")
    view: str | None = Field(default=None, max_length=30, description="subset_checklist: the view shown")
    inputs_hash: str = Field(max_length=64)
    data_hash: str | None = Field(
        default=None,
        max_length=64,
        description="hash of the data pushed (with the ref); a change on the server is tampering",
    )
    overlap: int | None = Field(default=None, description="the overlap last set on the server; 0 closes a retired task")
    state: str = Field(default="active", max_length=20, description="active, retired (kept: annotated) or deleted")
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class LsAnnotation(SQLModel, table=True):
    """The outcome of one pulled annotation: recorded, skipped, refused, incomplete, superseded, retired or deleted."""

    __tablename__ = "ls_annotation"
    __table_args__ = (UniqueConstraint("project_key", "annotation_id", name="uq_ls_annotation"),)
    id: int | None = Field(default=None, primary_key=True)
    project_key: str = Field(foreign_key="ls_project.key", index=True, max_length=250)
    annotation_id: int
    task_id: int
    subject: str = Field(max_length=210)
    ls_user: str = Field(max_length=320, description="the Label Studio user's e-mail (or #id without one)")
    person: str | None = Field(default=None, max_length=200)
    outcome: str = Field(max_length=20)
    reason: str = ""
    annotation_updated_at: str = Field(max_length=64)
    pulled_at: datetime = Field(default_factory=utcnow)


class Campaign(SQLModel, table=True):
    """A rating campaign over model outputs: criteria and scale, redundancy target, seed of the side draws."""

    __tablename__ = "campaign"
    name: str = Field(primary_key=True, max_length=200)
    kind: str = Field(max_length=20, description="rating or pairwise")
    criteria: list[str] = Field(sa_column=Column(JSON, nullable=False))
    scale_max: int
    redundancy: int
    seed: int
    source: str = ""
    created_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)


class CampaignOutput(SQLModel, table=True):
    """One system's output for one benchmark item; media are blobs of the workspace media store."""

    __tablename__ = "campaign_output"
    __table_args__ = (UniqueConstraint("campaign", "item", "system", name="uq_campaign_output"),)
    id: int | None = Field(default=None, primary_key=True)
    campaign: str = Field(foreign_key="campaign.name", index=True, max_length=200)
    item: str = Field(max_length=200)
    system: str = Field(max_length=200)
    prompt: str = ""
    text: str | None = None
    image: str | None = Field(default=None, max_length=80, description="sha256 + extension")
    audio: str | None = Field(default=None, max_length=80, description="sha256 + extension")


class CampaignUnit(SQLModel, table=True):
    """What one task asks raters to judge: one output, or two outputs with the sides drawn (seeded)."""

    __tablename__ = "campaign_unit"
    __table_args__ = (UniqueConstraint("campaign", "key", name="uq_campaign_unit"),)
    id: int | None = Field(default=None, primary_key=True)
    campaign: str = Field(foreign_key="campaign.name", index=True, max_length=200)
    key: str = Field(max_length=450)
    item: str = Field(max_length=200)
    output_a: int = Field(foreign_key="campaign_output.id", description="the output rated, or shown as A")
    output_b: int | None = Field(default=None, foreign_key="campaign_output.id", description="pairwise: shown as B")


class CampaignRating(SQLModel, table=True):
    """A rater's latest evaluation of a unit (an edit replaces it, as an event); a skip is kept as a skip."""

    __tablename__ = "campaign_rating"
    __table_args__ = (UniqueConstraint("unit_id", "rater", name="uq_campaign_rating"),)
    id: int | None = Field(default=None, primary_key=True)
    campaign: str = Field(foreign_key="campaign.name", index=True, max_length=200)
    unit_id: int = Field(foreign_key="campaign_unit.id")
    rater: str = Field(foreign_key="person.name")
    annotation_id: int
    skipped: bool = False
    scores: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    choice: str | None = Field(default=None, max_length=10, description="pairwise: A, B or tie as shown")
    annotation_updated_at: str = Field(max_length=64)
    updated_at: datetime = Field(default_factory=utcnow)
