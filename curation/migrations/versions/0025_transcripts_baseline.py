"""transcripts and the human baseline campaign (owner: ``curation/reference_tables.py``): each clip's
speech-to-text transcript per model (TRIAD G.6), and the human baseline's subset, assignments, answers and
grades (TRIAD §5.1, Table 7)

Revision ID: 0025_transcripts_baseline
Revises: 0024_audio_production
"""

import sqlalchemy as sa
from alembic import op

revision = "0025_transcripts_baseline"
down_revision = "0024_audio_production"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audio_transcript",
        sa.Column("audio_sha256", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=300), nullable=False),
        sa.Column("backend", sa.String(length=30), nullable=False),
        sa.Column("text", sa.String(), nullable=False),
        sa.Column("language", sa.String(length=20), nullable=True),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["audio_sha256"], ["asset.sha256"]),
        sa.PrimaryKeyConstraint("audio_sha256", "model"),
    )
    op.create_table(
        "baseline_campaign",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("raters_per_item", sa.Integer(), nullable=False),
        sa.Column("forms", sa.JSON(), nullable=False),
        sa.Column("items", sa.JSON(), nullable=False),
        sa.Column("pool", sa.JSON(), nullable=False),
        sa.Column("strata", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "baseline_assignment",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign", sa.String(length=200), nullable=False),
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("rater", sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(["campaign"], ["baseline_campaign.name"]),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.ForeignKeyConstraint(["rater"], ["person.name"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign", "item_id", "rater", name="uq_baseline_assignment"),
    )
    op.create_index("ix_baseline_assignment_campaign", "baseline_assignment", ["campaign"])
    op.create_table(
        "baseline_answer",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign", sa.String(length=200), nullable=False),
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("rater", sa.String(length=200), nullable=False),
        sa.Column("form", sa.String(length=10), nullable=False),
        sa.Column("answer", sa.String(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=30), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["campaign"], ["baseline_campaign.name"]),
        sa.ForeignKeyConstraint(["item_id"], ["item.id"]),
        sa.ForeignKeyConstraint(["rater"], ["person.name"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign", "item_id", "rater", "form", name="uq_baseline_answer"),
    )
    op.create_index("ix_baseline_answer_campaign", "baseline_answer", ["campaign"])
    op.create_table(
        "baseline_grade",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("answer_id", sa.Integer(), nullable=False),
        sa.Column("grader", sa.String(length=300), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["answer_id"], ["baseline_answer.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("answer_id", "grader", name="uq_baseline_grade"),
    )
    op.create_index("ix_baseline_grade_answer_id", "baseline_grade", ["answer_id"])


def downgrade() -> None:
    op.drop_index("ix_baseline_grade_answer_id", table_name="baseline_grade")
    op.drop_table("baseline_grade")
    op.drop_index("ix_baseline_answer_campaign", table_name="baseline_answer")
    op.drop_table("baseline_answer")
    op.drop_index("ix_baseline_assignment_campaign", table_name="baseline_assignment")
    op.drop_table("baseline_assignment")
    op.drop_table("baseline_campaign")
    op.drop_table("audio_transcript")
