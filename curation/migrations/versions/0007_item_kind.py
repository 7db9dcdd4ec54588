"""item kinds: every item carries its benchmark kind (default mcq) and its modality set

Adds ``item.kind`` (``mcq`` for every existing item) and ``item.modalities`` (NULL: all three, which every
existing item has), and lets ``item.image`` / ``item.audio`` be NULL for an item without that modality.

Revision ID: 0007_item_kind
Revises: 0003_checker
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_item_kind"
down_revision = "0003_checker"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("item", schema=None) as batch_op:
        batch_op.add_column(sa.Column("kind", sa.String(length=30), nullable=False, server_default="mcq"))
        batch_op.add_column(sa.Column("modalities", sa.JSON(), nullable=True))
        batch_op.alter_column("image", existing_type=sa.String(), nullable=True)
        batch_op.alter_column("audio", existing_type=sa.String(), nullable=True)


def downgrade() -> None:
    with op.batch_alter_table("item", schema=None) as batch_op:
        batch_op.alter_column("audio", existing_type=sa.String(), nullable=False)
        batch_op.alter_column("image", existing_type=sa.String(), nullable=False)
        batch_op.drop_column("modalities")
        batch_op.drop_column("kind")
