"""Alembic environment: always run in-process on the connection omnicurate hands over.

One linear chain holds the tables of every package, in the order they were added (file numbers increase
along it, and a file is named after its revision id). Each migration's docstring names the module that owns
the tables it changes, as ``(owner: ``checker/tables.py``)``, and carries ``Revision ID:`` and ``Revises:``
lines that match the code; ``tests/curation/test_migrations.py`` holds all of that. The domain imports none of the other packages, so the
metadata of their tables is not registered here: upgrades never read it, and only autogenerate does,
through ``scripts/new_migration.py``, which hands over the metadata of every package's tables as the
``target_metadata`` attribute.
"""

from alembic import context
from sqlalchemy import inspect, text

LEGACY_REVISIONS = {
    "0004_labelstudio": "0002_labelstudio",
    "0005_release": "0003_release",
    "0006_audit": "0004_audit",
    "0003_checker": "0005_checker",
}
"""Revision ids before the chain was renumbered in order (0001→0004→0005→0006→0003): same migrations."""


def _rename_legacy_revision(connection) -> None:  # type: ignore[no-untyped-def]
    """A workspace stamped with an old id gets the new id of the same migration, in the upgrade's transaction."""
    if not inspect(connection).has_table("alembic_version"):
        return
    for old, new in LEGACY_REVISIONS.items():
        connection.execute(
            text("UPDATE alembic_version SET version_num = :new WHERE version_num = :old"), {"new": new, "old": old}
        )


connection = context.config.attributes["connection"]
_rename_legacy_revision(connection)
context.configure(
    connection=connection,
    target_metadata=context.config.attributes.get("target_metadata"),
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
