"""screening (owner: ``curation/screening/tables.py``): candidate story transitions as light rows and each
screening step's outcome per candidate

Revision ID: 0010_screening
Revises: 0009_item_extra
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_screening"
down_revision = "0009_item_extra"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "candidate",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("book", sa.String(length=200), nullable=False),
        sa.Column("page", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("collection", sa.String(length=100), nullable=False),
        sa.Column("license", sa.String(length=100), nullable=False),
        sa.Column("source_url", sa.String(), nullable=False),
        sa.Column("current_text", sa.Text(), nullable=False),
        sa.Column("next_text", sa.Text(), nullable=False),
        sa.Column("current_image", sa.String(), nullable=False),
        sa.Column("next_image", sa.String(), nullable=False),
        sa.Column("speech_lines", sa.JSON(), nullable=True),
        sa.Column("annotations", sa.JSON(), nullable=True),
        sa.Column("line_hash", sa.String(length=64), nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_candidate_book", "candidate", ["book"])
    op.create_table(
        "screen_result",
        sa.Column("candidate_id", sa.String(length=200), nullable=False),
        sa.Column("step", sa.String(length=40), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("outcome", sa.String(length=10), nullable=False),
        sa.Column("reason", sa.String(length=100), nullable=False),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["candidate_id"], ["candidate.id"]),
        sa.PrimaryKeyConstraint("candidate_id", "step"),
    )
    op.create_index("ix_screen_result_step", "screen_result", ["step", "outcome"])


def downgrade() -> None:
    op.drop_index("ix_screen_result_step", table_name="screen_result")
    op.drop_table("screen_result")
    op.drop_index("ix_candidate_book", table_name="candidate")
    op.drop_table("candidate")
