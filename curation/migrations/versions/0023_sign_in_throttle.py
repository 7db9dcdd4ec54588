"""the sign-in throttle (owner: ``curation/work_tables.py``): recent failed password sign-ins per typed name,
known or not, and when the next attempt on it may be checked; taken under the write lock, so that parallel
attempts on one name are throttled as sequential ones are

Revision ID: 0023_sign_in_throttle
Revises: 0022_people_abilities
"""

import sqlalchemy as sa
from alembic import op

revision = "0023_sign_in_throttle"
down_revision = "0022_people_abilities"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sign_in_throttle",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("checking_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_index("ix_sign_in_throttle_last_at", "sign_in_throttle", ["last_at"])


def downgrade() -> None:
    op.drop_index("ix_sign_in_throttle_last_at", "sign_in_throttle")
    op.drop_table("sign_in_throttle")
