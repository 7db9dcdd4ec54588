"""Media facts (owner: ``curation/audit/tables.py``): what each stored medium's bytes alone decide (decode
check, loudness, true peak, format, size), measured once per content hash and read by the media gate.

Revision ID: 0019_media_facts
Revises: 0018_candidate_origin
"""

import sqlalchemy as sa
from alembic import op

revision = "0019_media_facts"
down_revision = "0018_candidate_origin"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "media_fact",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sha256"),
    )


def downgrade() -> None:
    op.drop_table("media_fact")
