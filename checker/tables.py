"""The probe cache table (migration 0005_checker)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class ProbeResult(SQLModel, table=True):
    """A backend's raw output for one view of one item's probe inputs; the cache a re-run reads first."""

    __tablename__ = "probe_result"
    __table_args__ = (
        UniqueConstraint(
            "input_hash", "view", "backend", "model", "estimator", "params_hash", name="uq_probe_result_key"
        ),
    )
    id: int | None = Field(default=None, primary_key=True)
    input_hash: str = Field(max_length=64, index=True, description="hash of what the probe sees of the item")
    view: str = Field(max_length=20)
    backend: str = Field(max_length=20)
    model: str = Field(max_length=500)
    estimator: str = Field(max_length=10)
    params_hash: str = Field(max_length=16)
    item_id: str = Field(max_length=200, index=True, description="the item probed first with these inputs")
    output: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)
