"""judge captions and recorded query draws (owner: ``curation/kinds/judge/caption_draw_tables.py``): captions of
media a judge or system cannot take, kept per model and prompt; each seeded draw of a query import

Revision ID: 0026_judge_captions_draws
Revises: 0025_transcripts_baseline
"""

import sqlalchemy as sa
from alembic import op

revision = "0026_judge_captions_draws"
down_revision = "0025_transcripts_baseline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judge_caption",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("asset", sa.String(length=64), nullable=False),
        sa.Column("modality", sa.String(length=10), nullable=False),
        sa.Column("model", sa.String(length=500), nullable=False),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=False),
        sa.Column("caption", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("asset", "model", "prompt_sha256", name="uq_judge_caption_key"),
    )
    op.create_table(
        "judge_query_draw",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("file", sa.String(length=500), nullable=False),
        sa.Column("file_sha256", sa.String(length=64), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("per_task", sa.Integer(), nullable=True),
        sa.Column("per_source", sa.Integer(), nullable=True),
        sa.Column("eligible", sa.Integer(), nullable=False),
        sa.Column("drawn", sa.JSON(), nullable=False),
        sa.Column("held", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("judge_query_draw")
    op.drop_table("judge_caption")
