"""people's languages and qualifications (owner: ``curation/tables.py``): the languages a person reads and the
stages they are qualified for, which queues and the staffing planner honour (empty: any)

Revision ID: 0022_people_abilities
Revises: 0021_reservations
"""

import sqlalchemy as sa
from alembic import op

revision = "0022_people_abilities"
down_revision = "0021_reservations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("person", sa.Column("languages", sa.String(length=200), nullable=False, server_default=""))
    op.add_column("person", sa.Column("can", sa.String(length=500), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("person") as batch:
        batch.drop_column("can")
        batch.drop_column("languages")
