"""The Label Studio bridge's tables (owner: ``annotation_ui/labelstudio/tables.py``): projects, tasks and
pulled annotations; rating campaigns, their outputs, units and ratings.

Revision ID: 0002_labelstudio (called 0004_labelstudio before the chain was renumbered in order)
Revises: 0001_initial
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_labelstudio"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ls_project",
        sa.Column("key", sa.String(length=250), nullable=False),
        sa.Column("server_url", sa.String(length=500), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(length=250), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "ls_task",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_key", sa.String(length=250), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("ref", sa.String(length=400), nullable=False),
        sa.Column("subject", sa.String(length=210), nullable=False),
        sa.Column("view", sa.String(length=30), nullable=True),
        sa.Column("inputs_hash", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["project_key"], ["ls_project.key"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("project_key", "task_id", name="uq_ls_task"),
    )
    op.create_index("ix_ls_task_project_key", "ls_task", ["project_key"])
    op.create_table(
        "ls_annotation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_key", sa.String(length=250), nullable=False),
        sa.Column("annotation_id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("subject", sa.String(length=210), nullable=False),
        sa.Column("ls_user", sa.String(length=320), nullable=False),
        sa.Column("person", sa.String(length=200), nullable=True),
        sa.Column("outcome", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.String(), nullable=False),
        sa.Column("annotation_updated_at", sa.String(length=64), nullable=False),
        sa.Column("pulled_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["project_key"], ["ls_project.key"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("project_key", "annotation_id", name="uq_ls_annotation"),
    )
    op.create_index("ix_ls_annotation_project_key", "ls_annotation", ["project_key"])
    op.create_table(
        "campaign",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("criteria", sa.JSON(), nullable=False),
        sa.Column("scale_max", sa.Integer(), nullable=False),
        sa.Column("redundancy", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "campaign_output",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign", sa.String(length=200), nullable=False),
        sa.Column("item", sa.String(length=200), nullable=False),
        sa.Column("system", sa.String(length=200), nullable=False),
        sa.Column("prompt", sa.String(), nullable=False),
        sa.Column("text", sa.String(), nullable=True),
        sa.Column("image", sa.String(length=80), nullable=True),
        sa.Column("audio", sa.String(length=80), nullable=True),
        sa.ForeignKeyConstraint(["campaign"], ["campaign.name"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign", "item", "system", name="uq_campaign_output"),
    )
    op.create_index("ix_campaign_output_campaign", "campaign_output", ["campaign"])
    op.create_table(
        "campaign_unit",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign", sa.String(length=200), nullable=False),
        sa.Column("key", sa.String(length=450), nullable=False),
        sa.Column("item", sa.String(length=200), nullable=False),
        sa.Column("output_a", sa.Integer(), nullable=False),
        sa.Column("output_b", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["campaign"], ["campaign.name"]),
        sa.ForeignKeyConstraint(["output_a"], ["campaign_output.id"]),
        sa.ForeignKeyConstraint(["output_b"], ["campaign_output.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign", "key", name="uq_campaign_unit"),
    )
    op.create_index("ix_campaign_unit_campaign", "campaign_unit", ["campaign"])
    op.create_table(
        "campaign_rating",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign", sa.String(length=200), nullable=False),
        sa.Column("unit_id", sa.Integer(), nullable=False),
        sa.Column("rater", sa.String(), nullable=False),
        sa.Column("annotation_id", sa.Integer(), nullable=False),
        sa.Column("skipped", sa.Boolean(), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=True),
        sa.Column("choice", sa.String(length=10), nullable=True),
        sa.Column("annotation_updated_at", sa.String(length=64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["campaign"], ["campaign.name"]),
        sa.ForeignKeyConstraint(["unit_id"], ["campaign_unit.id"]),
        sa.ForeignKeyConstraint(["rater"], ["person.name"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("unit_id", "rater", name="uq_campaign_rating"),
    )
    op.create_index("ix_campaign_rating_campaign", "campaign_rating", ["campaign"])


def downgrade() -> None:
    op.drop_index("ix_campaign_rating_campaign", "campaign_rating")
    op.drop_table("campaign_rating")
    op.drop_index("ix_campaign_unit_campaign", "campaign_unit")
    op.drop_table("campaign_unit")
    op.drop_index("ix_campaign_output_campaign", "campaign_output")
    op.drop_table("campaign_output")
    op.drop_table("campaign")
    op.drop_index("ix_ls_annotation_project_key", "ls_annotation")
    op.drop_table("ls_annotation")
    op.drop_index("ix_ls_task_project_key", "ls_task")
    op.drop_table("ls_task")
    op.drop_table("ls_project")
