"""story study (owner: ``curation/study/tables.py``): the human study of a story release — its window, tracks
and page snapshot, and the judges' scores for the systems' outputs

Revision ID: 0011_story_study
Revises: 0010_screening
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_story_study"
down_revision = "0010_screening"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "story_study",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("release_name", sa.String(length=200), nullable=False),
        sa.Column("release_version", sa.String(length=100), nullable=False),
        sa.Column("manifest_sha256", sa.String(length=64), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("window", sa.JSON(), nullable=False),
        sa.Column("transitions", sa.JSON(), nullable=False),
        sa.Column("tracks", sa.JSON(), nullable=False),
        sa.Column("systems", sa.JSON(), nullable=False),
        sa.Column("pages", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "story_study_judge",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study", sa.String(length=200), nullable=False),
        sa.Column("judge", sa.String(length=200), nullable=False),
        sa.Column("system", sa.String(length=200), nullable=False),
        sa.Column("transition", sa.String(length=200), nullable=False),
        sa.Column("track", sa.String(length=20), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["study"], ["story_study.name"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("study", "judge", "system", "transition", "track", name="uq_story_study_judge"),
    )
    op.create_index("ix_story_study_judge_study", "story_study_judge", ["study"])


def downgrade() -> None:
    op.drop_index("ix_story_study_judge_study", table_name="story_study_judge")
    op.drop_table("story_study_judge")
    op.drop_table("story_study")
