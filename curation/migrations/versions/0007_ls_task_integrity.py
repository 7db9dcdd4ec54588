"""ls_task (owner: ``annotation_ui/labelstudio/tables.py``): the hash of the data each task was pushed with, and the overlap the bridge last set on it

Task data is compared with ``data_hash`` on every pull and push (a task whose data was changed on the
server is restored, and annotations made on the changed data are refused); ``overlap`` is what the bridge
last asked Label Studio to collect on the task (the stage quorum plus one per annotator whose annotations
were refused; 0 for a retired task), so a pull re-opens a task only when that changes.

Revision ID: 0007_ls_task_integrity
Revises: 0006_item_kind
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_ls_task_integrity"
down_revision = "0006_item_kind"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("ls_task") as batch:
        batch.add_column(sa.Column("data_hash", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("overlap", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ls_task") as batch:
        batch.drop_column("overlap")
        batch.drop_column("data_hash")
