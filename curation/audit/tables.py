"""Tables of the media and audit gates: cached signatures and facts, and the original -> normalized mapping."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column
from sqlmodel import Field, SQLModel

from curation.tables import utcnow


class MediaSignature(SQLModel, table=True):
    """Audit signature of one stored asset, computed once (content-addressed, so it never goes stale)."""

    __tablename__ = "media_signature"
    sha256: str = Field(primary_key=True, max_length=64)
    kind: str = Field(max_length=10)
    version: int = Field(description="signature algorithm version; older rows are recomputed")
    data: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class AssetDerivative(SQLModel, table=True):
    """Which asset is the normalized form of an original under which media settings.

    A separate mapping (besides ``asset.derived_from``) because two originals with the same samples
    normalize to the same bytes, and an asset row has one ``derived_from``.
    """

    __tablename__ = "asset_derivative"
    original: str = Field(foreign_key="asset.sha256", primary_key=True, max_length=64)
    purpose: str = Field(primary_key=True, max_length=30, description="normalized")
    derivative: str = Field(foreign_key="asset.sha256", max_length=64)
    settings_key: str = Field(max_length=64, description="hash of the media settings that produced it")
    created_at: datetime = Field(default_factory=utcnow)


SIGNATURE_VERSION = 2
"""Bump when a signature algorithm changes: cached signatures (``MediaSignature``) of older versions are
recomputed. 2: image hashes from the reduced decode, with the centre-crop hashes."""
HASHES_PER_QUERY = 500
"""Content hashes per ``IN (...)`` query of these tables (SQLite limits bound parameters)."""


class MediaFact(SQLModel, table=True):
    """What a medium's bytes alone decide (``curation.mediatools.facts``: decode check, loudness, true peak,
    format, size, JPEG segments), measured once per content hash and read by the media gate at every build."""

    __tablename__ = "media_fact"
    sha256: str = Field(primary_key=True, max_length=64)
    kind: str = Field(max_length=10)
    version: int = Field(description="the measuring function's version; rows of another version are measured again")
    data: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)
