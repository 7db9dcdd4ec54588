"""speakers' consent records, audio takes, producers' take choices and spot checks
(owner: ``curation/audio_production/tables.py``)

Revision ID: 0024_audio_production
Revises: 0023_sign_in_throttle
"""

import sqlalchemy as sa
from alembic import op

revision = "0024_audio_production"
down_revision = "0023_sign_in_throttle"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "speaker_consent",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("speaker", sa.String(length=200), nullable=False),
        sa.Column("scope", sa.String(length=2000), nullable=False),
        sa.Column("signed_on", sa.Date(), nullable=False),
        sa.Column("document", sa.String(length=2000), nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
        sa.Column("recorded_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["speaker"], ["person.name"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_speaker_consent_speaker", "speaker_consent", ["speaker"])
    op.create_table(
        "audio_take",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("take", sa.String(length=200), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("recorded_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.ForeignKeyConstraint(["sha256"], ["asset.sha256"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("item_id", "take", name="uq_audio_take_item_take"),
    )
    op.create_index("ix_audio_take_item_id", "audio_take", ["item_id"])
    op.create_table(
        "take_choice",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("take", sa.String(length=200), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("producer", sa.String(length=200), nullable=False),
        sa.Column("note", sa.String(length=4000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.ForeignKeyConstraint(["producer"], ["person.name"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_take_choice_item_id", "take_choice", ["item_id"])
    op.create_table(
        "spot_check",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("listener", sa.String(length=200), nullable=False),
        sa.Column("verdict", sa.String(length=20), nullable=False),
        sa.Column("note", sa.String(length=4000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.ForeignKeyConstraint(["listener"], ["person.name"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("item_id", "listener", "sha256", name="uq_spot_check_listener"),
    )
    op.create_index("ix_spot_check_item_id", "spot_check", ["item_id"])


def downgrade() -> None:
    for table in ("spot_check", "take_choice", "audio_take", "speaker_consent"):
        op.drop_index(f"ix_{table}_item_id" if table != "speaker_consent" else "ix_speaker_consent_speaker", table)
        op.drop_table(table)
