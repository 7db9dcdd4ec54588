"""candidate origin (owner: ``curation/screening/tables.py``): provenance per page of a candidate transition,
as ``curate import books`` reads it from the book's package (attribution, language, each page's place)

Revision ID: 0018_candidate_origin
Revises: 0014_drafts_sessions
"""

import sqlalchemy as sa
from alembic import op

revision = "0018_candidate_origin"
down_revision = "0014_drafts_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("candidate") as batch:
        batch.add_column(sa.Column("origin", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("candidate") as batch:
        batch.drop_column("origin")
