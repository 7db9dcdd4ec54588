"""The domain's tables (owner: ``curation/tables.py``): people, scene groups, assets, items and their
revisions, review records, decisions, events, gate results.

Revision ID: 0001_initial
Revises: (none: the first migration)
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "asset",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("mime", sa.String(length=100), nullable=False),
        sa.Column("ext", sa.String(length=10), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("width", sa.Integer(), nullable=True),
        sa.Column("height", sa.Integer(), nullable=True),
        sa.Column("duration_s", sa.Float(), nullable=True),
        sa.Column("sample_rate", sa.Integer(), nullable=True),
        sa.Column("channels", sa.Integer(), nullable=True),
        sa.Column("original_name", sa.String(), nullable=False),
        sa.Column("provenance", sa.JSON(), nullable=True),
        sa.Column("derived_from", sa.String(), nullable=True),
        sa.Column("transform", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["derived_from"],
            ["asset.sha256"],
        ),
        sa.PrimaryKeyConstraint("sha256"),
    )
    with op.batch_alter_table("asset", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_asset_derived_from"), ["derived_from"], unique=False)

    op.create_table(
        "event",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=60), nullable=False),
        sa.Column("subject", sa.String(length=210), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_event_at"), ["at"], unique=False)
        batch_op.create_index(batch_op.f("ix_event_subject"), ["subject"], unique=False)

    op.create_table(
        "person",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("roles", sa.String(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("password_hash", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "scene_group",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("perturbed", sa.String(length=10), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "item",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("group_id", sa.String(length=200), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("author", sa.String(), nullable=False),
        sa.Column("language", sa.String(length=20), nullable=False),
        sa.Column("context", sa.String(), nullable=False),
        sa.Column("question", sa.String(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("answer", sa.String(length=1), nullable=False),
        sa.Column("taxonomy", sa.JSON(), nullable=False),
        sa.Column("ambiguous", sa.JSON(), nullable=False),
        sa.Column("image", sa.String(), nullable=False),
        sa.Column("audio", sa.String(), nullable=False),
        sa.Column("provenance", sa.JSON(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["audio"],
            ["asset.sha256"],
        ),
        sa.ForeignKeyConstraint(
            ["author"],
            ["person.name"],
        ),
        sa.ForeignKeyConstraint(
            ["group_id"],
            ["scene_group.id"],
        ),
        sa.ForeignKeyConstraint(
            ["image"],
            ["asset.sha256"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("item", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_item_author"), ["author"], unique=False)
        batch_op.create_index(batch_op.f("ix_item_group_id"), ["group_id"], unique=False)

    op.create_table(
        "review_record",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subject", sa.String(length=210), nullable=False),
        sa.Column("stage", sa.String(length=30), nullable=False),
        sa.Column("reviewer", sa.String(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("inputs_hash", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("source", sa.String(length=50), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["reviewer"],
            ["person.name"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("subject", "stage", "reviewer", "revision", name="uq_review_once"),
    )
    with op.batch_alter_table("review_record", schema=None) as batch_op:
        batch_op.create_index("ix_review_subject", ["subject"], unique=False)

    op.create_table(
        "decision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("stage", sa.String(length=30), nullable=True),
        sa.Column("verdict", sa.String(length=10), nullable=True),
        sa.Column("reason", sa.String(), nullable=False),
        sa.Column("actor", sa.String(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["actor"],
            ["person.name"],
        ),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["item.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("decision", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_decision_item_id"), ["item_id"], unique=False)

    op.create_table(
        "gate_result",
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("gate", sa.String(length=30), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("blocking", sa.Boolean(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["item.id"],
        ),
        sa.PrimaryKeyConstraint("item_id", "gate"),
    )
    op.create_table(
        "item_revision",
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("content", sa.JSON(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["item.id"],
        ),
        sa.PrimaryKeyConstraint("item_id", "revision"),
    )


def downgrade() -> None:

    op.drop_table("item_revision")
    op.drop_table("gate_result")
    with op.batch_alter_table("decision", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_decision_item_id"))

    op.drop_table("decision")
    with op.batch_alter_table("review_record", schema=None) as batch_op:
        batch_op.drop_index("ix_review_subject")

    op.drop_table("review_record")
    with op.batch_alter_table("item", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_item_group_id"))
        batch_op.drop_index(batch_op.f("ix_item_author"))

    op.drop_table("item")
    op.drop_table("scene_group")
    op.drop_table("person")
    with op.batch_alter_table("event", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_event_subject"))
        batch_op.drop_index(batch_op.f("ix_event_at"))

    op.drop_table("event")
    with op.batch_alter_table("asset", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_asset_derived_from"))

    op.drop_table("asset")
