"""judge queries (owner: ``curation/kinds/judge/query_tables.py``): candidate queries of a judge_task benchmark
before they become tasks (import, audit, screen, refine)

Revision ID: 0017_judge_queries
Revises: 0014_drafts_sessions
"""

import sqlalchemy as sa
from alembic import op

revision = "0017_judge_queries"
down_revision = "0014_drafts_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judge_query",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("instruction", sa.String(), nullable=False),
        sa.Column("original", sa.String(), nullable=False),
        sa.Column("inputs", sa.JSON(), nullable=False),
        sa.Column("output", sa.String(length=10), nullable=False),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("license", sa.String(length=100), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("task", sa.String(length=200), nullable=True),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("judge_query")
