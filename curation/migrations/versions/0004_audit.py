"""The media audit's tables (owner: ``curation/audit/tables.py``): cached media signatures and the
original -> normalized asset mapping.

Revision ID: 0004_audit (called 0006_audit before the chain was renumbered in order)
Revises: 0003_release
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_audit"
down_revision = "0003_release"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "media_signature",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sha256"),
    )
    op.create_table(
        "asset_derivative",
        sa.Column("original", sa.String(length=64), nullable=False),
        sa.Column("purpose", sa.String(length=30), nullable=False),
        sa.Column("derivative", sa.String(length=64), nullable=False),
        sa.Column("settings_key", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["original"], ["asset.sha256"]),
        sa.ForeignKeyConstraint(["derivative"], ["asset.sha256"]),
        sa.PrimaryKeyConstraint("original", "purpose"),
    )


def downgrade() -> None:
    op.drop_table("asset_derivative")
    op.drop_table("media_signature")
