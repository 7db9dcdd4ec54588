"""judge_task kind (owner: ``curation/kinds/judge/tables.py``): tasks, responses, checklist drafts (the drafting cache), stage records, judging samples,
annotations (drafts and applied), serving cursors and judge outputs

Revision ID: 0008_judge
Revises: 0007_ls_task_integrity
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_judge"
down_revision = "0007_ls_task_integrity"
branch_labels = None
depends_on = None


def _when(name: str = "created_at") -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "judge_task",
        sa.Column("id", sa.String(length=200), primary_key=True),
        sa.Column("instruction", sa.String(), nullable=False),
        sa.Column("inputs", sa.JSON(), nullable=False),
        sa.Column("output", sa.String(length=10), nullable=False),
        sa.Column("modality_pair", sa.String(length=60), nullable=False),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("license", sa.String(length=100), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        _when(),
    )
    op.create_table(
        "judge_response",
        sa.Column("id", sa.String(length=200), primary_key=True),
        sa.Column("task", sa.String(length=200), sa.ForeignKey("judge_task.id"), nullable=False),
        sa.Column("system", sa.String(length=200), nullable=False),
        sa.Column("modality", sa.String(length=10), nullable=False),
        sa.Column("text", sa.String(), nullable=True),
        sa.Column("asset", sa.String(length=64), sa.ForeignKey("asset.sha256"), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        _when(),
    )
    op.create_index("ix_judge_response_task", "judge_response", ["task"])
    op.create_table(
        "judge_draft",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("task", sa.String(length=200), sa.ForeignKey("judge_task.id"), nullable=False),
        sa.Column("input_hash", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=500), nullable=False),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=False),
        sa.Column("output", sa.JSON(), nullable=False),
        _when(),
        sa.UniqueConstraint("input_hash", "model", "prompt_sha256", name="uq_judge_draft_key"),
    )
    op.create_index("ix_judge_draft_task", "judge_draft", ["task"])
    op.create_table(
        "judge_record",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("subject", sa.String(length=200), nullable=False),
        sa.Column("stage", sa.String(length=40), nullable=False),
        sa.Column("reviewer", sa.String(), sa.ForeignKey("person.name"), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        _when(),
        _when("updated_at"),
        sa.UniqueConstraint("subject", "stage", "reviewer", name="uq_judge_record_once"),
    )
    op.create_index("ix_judge_record_subject", "judge_record", ["subject"])
    op.create_table(
        "judge_sample",
        sa.Column("id", sa.String(length=300), primary_key=True),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("task", sa.String(length=200), sa.ForeignKey("judge_task.id"), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("applied", sa.Integer(), nullable=False),
    )
    op.create_index("ix_judge_sample_serving", "judge_sample", ["kind", "position"])
    op.create_table(
        "judge_annotation",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("sample", sa.String(length=300), sa.ForeignKey("judge_sample.id"), nullable=False),
        sa.Column("annotator", sa.String(), sa.ForeignKey("person.name"), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("applied", sa.Boolean(), nullable=False),
        _when("updated_at"),
        sa.UniqueConstraint("sample", "annotator", name="uq_judge_annotation_once"),
    )
    op.create_index("ix_judge_annotation_sample", "judge_annotation", ["sample"])
    op.create_index("ix_judge_annotation_annotator", "judge_annotation", ["annotator"])
    op.create_table(
        "judge_cursor",
        sa.Column("person", sa.String(), sa.ForeignKey("person.name"), primary_key=True),
        sa.Column("kind", sa.String(length=10), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
    )
    op.create_table(
        "judge_output",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("sample", sa.String(length=300), sa.ForeignKey("judge_sample.id"), nullable=False),
        sa.Column("judge", sa.String(length=200), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.UniqueConstraint("sample", "judge", name="uq_judge_output_once"),
    )
    op.create_index("ix_judge_output_sample", "judge_output", ["sample"])


def downgrade() -> None:
    for table in (
        "judge_output",
        "judge_cursor",
        "judge_annotation",
        "judge_sample",
        "judge_record",
        "judge_draft",
        "judge_response",
        "judge_task",
    ):
        op.drop_table(table)
