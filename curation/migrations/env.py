"""Alembic environment: always run in-process on the connection omnicurate hands over."""

from alembic import context
from sqlmodel import SQLModel

from curation import tables  # noqa: F401  (registers the tables on the metadata)

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
