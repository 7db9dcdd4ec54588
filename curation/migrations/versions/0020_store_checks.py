"""Store checks (owner: ``curation/tables.py``): the file status of each media store file when its bytes last
hashed to its name, so that a release build hashes only the files that changed since.

Revision ID: 0020_store_checks
Revises: 0019_media_facts
"""

import sqlalchemy as sa
from alembic import op

revision = "0020_store_checks"
down_revision = "0019_media_facts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "store_check",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("stat", sa.String(length=200), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sha256"),
    )


def downgrade() -> None:
    op.drop_table("store_check")
