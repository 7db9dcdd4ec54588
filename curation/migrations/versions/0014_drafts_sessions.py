"""drafts and sign-in sessions (owner: ``curation/work_tables.py``): server-side sign-in sessions that a
sign-out ends, and people's drafts of typed forms per page and subject

Revision ID: 0014_drafts_sessions
Revises: 0011_story_study
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_drafts_sessions"
down_revision = "0011_story_study"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sign_in_session",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("person", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_why", sa.String(length=100), nullable=True),
        sa.ForeignKeyConstraint(["person"], ["person.name"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_sign_in_session_person", "sign_in_session", ["person"])
    op.create_table(
        "draft",
        sa.Column("person", sa.String(), nullable=False),
        sa.Column("page", sa.String(length=100), nullable=False),
        sa.Column("subject", sa.String(length=300), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["person"], ["person.name"]),
        sa.PrimaryKeyConstraint("person", "page", "subject"),
    )


def downgrade() -> None:
    op.drop_table("draft")
    op.drop_index("ix_sign_in_session_person", table_name="sign_in_session")
    op.drop_table("sign_in_session")
