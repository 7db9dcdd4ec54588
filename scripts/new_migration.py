"""Write a new migration by comparing every package's tables with a database at the current head.

    python scripts/new_migration.py "what it adds"

The new file goes to curation/migrations/versions with the next number; its docstring must then name the
module that owns the tables (see the existing migrations) and say what changes.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from alembic import command

from curation import db
from omnicurate.schema import all_tables


def main(message: str) -> Path:
    numbers = [int(p.name[:4]) for p in (db.MIGRATIONS / "versions").glob("[0-9][0-9][0-9][0-9]_*.py")]
    slug = re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:30]
    rev_id = f"{max(numbers) + 1:04d}_{slug}"
    with tempfile.TemporaryDirectory() as tmp:
        engine = db.make_engine(f"sqlite:///{tmp}/head.db")
        db.upgrade(engine)
        with engine.begin() as connection:
            cfg = db._alembic_config(connection)
            cfg.set_main_option("file_template", "%%(rev)s")
            cfg.attributes["target_metadata"] = all_tables()
            command.revision(cfg, message, autogenerate=True, rev_id=rev_id)
        engine.dispose()
    return db.MIGRATIONS / "versions" / f"{rev_id}.py"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(main(sys.argv[1]))
