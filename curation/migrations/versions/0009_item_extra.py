"""item.extra (owner: ``curation/tables.py``): a kind's own fields, such as a story transition's next page,
annotations and their proposals

Revision ID: 0009_item_extra
Revises: 0008_judge
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_item_extra"
down_revision = "0008_judge"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("item") as batch:
        batch.add_column(sa.Column("extra", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("item") as batch:
        batch.drop_column("extra")
