"""reservations (owner: ``curation/work_tables.py``): queue entries held for one person at one stage for a lease,
so that people on one queue are offered different entries

Revision ID: 0021_reservations
Revises: 0020_store_checks
"""

import sqlalchemy as sa
from alembic import op

revision = "0021_reservations"
down_revision = "0020_store_checks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reservation",
        sa.Column("subject", sa.String(length=300), nullable=False),
        sa.Column("stage", sa.String(length=100), nullable=False),
        sa.Column("person", sa.String(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["person"], ["person.name"]),
        sa.PrimaryKeyConstraint("subject", "stage", "person"),
    )
    op.create_index("ix_reservation_expires_at", "reservation", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_reservation_expires_at", "reservation")
    op.drop_table("reservation")
