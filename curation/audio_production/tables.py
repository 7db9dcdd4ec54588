"""The audio production records (TRIAD App. B.1-B.2): speakers' consent, takes, the producer's choice, spot checks.

Created by migration ``0024_audio_production``. A consent record holds a reference to the signed document,
never the document; takes are stored media that no release ships unless an item's audio is that take.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel

from ..tables import utcnow


class Consent(SQLModel, table=True):
    """A speaker's recorded consent (TRIAD B.1: a release covering benchmark distribution); the latest per
    speaker counts, and a withdrawal (``withdrawn``) ends it."""

    __tablename__ = "speaker_consent"
    id: int | None = Field(default=None, primary_key=True)
    speaker: str = Field(foreign_key="person.name", index=True, max_length=200)
    scope: str = Field(max_length=2000, description="what the speaker consented to, as the document says")
    signed_on: date
    document: str = Field(max_length=2000, description="where the signed document is kept; never its bytes")
    withdrawn: bool = False
    recorded_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)


class AudioTake(SQLModel, table=True):
    """One recorded take of an item's audio; only the take that is the item's audio is ever released."""

    __tablename__ = "audio_take"
    __table_args__ = (UniqueConstraint("item_id", "take", name="uq_audio_take_item_take"),)
    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", index=True, max_length=200)
    take: str = Field(max_length=200, description="the take's name within the item (t1, t2, ...)")
    sha256: str = Field(foreign_key="asset.sha256", max_length=64)
    recorded_by: str = Field(max_length=200)
    created_at: datetime = Field(default_factory=utcnow)


class TakeChoice(SQLModel, table=True):
    """A producer's choice of an item's take (TRIAD B.2: the most natural); every choice is kept, the latest
    counts."""

    __tablename__ = "take_choice"
    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", index=True, max_length=200)
    take: str = Field(max_length=200)
    sha256: str = Field(max_length=64)
    producer: str = Field(foreign_key="person.name", max_length=200)
    note: str = Field(default="", max_length=4000)
    created_at: datetime = Field(default_factory=utcnow)


class SpotCheck(SQLModel, table=True):
    """An independent listener's cross-actor consistency check of a sampled clip (TRIAD B.2); one per listener
    and clip content, a new answer replaces theirs."""

    __tablename__ = "spot_check"
    __table_args__ = (UniqueConstraint("item_id", "listener", "sha256", name="uq_spot_check_listener"),)
    id: int | None = Field(default=None, primary_key=True)
    item_id: str = Field(foreign_key="item.id", index=True, max_length=200)
    sha256: str = Field(max_length=64, description="the clip the listener heard")
    listener: str = Field(foreign_key="person.name", max_length=200)
    verdict: str = Field(max_length=20, description="consistent or inconsistent")
    note: str = Field(default="", max_length=4000)
    created_at: datetime = Field(default_factory=utcnow)
