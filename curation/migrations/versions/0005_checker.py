"""The probe checker's cache (owner: ``checker/tables.py``): raw probe outputs keyed by inputs, view,
backend, model, estimator and parameters.

Revision ID: 0005_checker (called 0003_checker before the chain was renumbered in order)
Revises: 0004_audit
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_checker"
down_revision = "0004_audit"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "probe_result",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("input_hash", sa.String(length=64), nullable=False),
        sa.Column("view", sa.String(length=20), nullable=False),
        sa.Column("backend", sa.String(length=20), nullable=False),
        sa.Column("model", sa.String(length=500), nullable=False),
        sa.Column("estimator", sa.String(length=10), nullable=False),
        sa.Column("params_hash", sa.String(length=16), nullable=False),
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("output", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "input_hash", "view", "backend", "model", "estimator", "params_hash", name="uq_probe_result_key"
        ),
    )
    with op.batch_alter_table("probe_result", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_probe_result_input_hash"), ["input_hash"], unique=False)
        batch_op.create_index(batch_op.f("ix_probe_result_item_id"), ["item_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("probe_result", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_probe_result_item_id"))
        batch_op.drop_index(batch_op.f("ix_probe_result_input_hash"))
    op.drop_table("probe_result")
