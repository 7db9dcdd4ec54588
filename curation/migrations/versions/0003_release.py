"""The release table (owner: ``exports/tables.py``): one row per published release version, with its
fixed date and content digest.

Revision ID: 0003_release (called 0005_release before the chain was renumbered in order)
Revises: 0002_labelstudio
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_release"
down_revision = "0002_labelstudio"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "release",
        sa.Column("version", sa.String(length=100), nullable=False),
        sa.Column("release_date", sa.String(length=10), nullable=False),
        sa.Column("manifest_sha256", sa.String(length=64), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("partial", sa.Boolean(), nullable=False),
        sa.Column("path", sa.String(), nullable=False),
        sa.Column("built_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("version"),
    )


def downgrade() -> None:
    op.drop_table("release")
