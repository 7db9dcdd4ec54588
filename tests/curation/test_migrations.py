"""The migration chain: in order, truthful docstrings, every package's tables built, old workspaces upgraded."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select

from curation import db
from curation.tables import Person
from curation.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = db.MIGRATIONS / "versions"
OLD_HEAD = "0003_checker"
"""The head before the chain was renumbered: workspaces created until then carry it."""


def _assignments(path: Path) -> dict[str, object]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    values: dict[str, object] = {"__doc__": ast.get_docstring(tree)}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


TOUCHES = re.compile(
    r'(?<!batch_)op\.(?:create_table|batch_alter_table|add_column|alter_column|drop_column)\(\s*"(\w+)"'
)


def test_the_chain_is_in_file_order_and_every_docstring_tells_the_truth() -> None:
    """File numbers increase along the chain; each docstring names its revision, parent and tables' owner."""
    scripts = sorted(VERSIONS.glob("*.py"))
    previous, last_number = None, 0
    for path in scripts:
        values = _assignments(path)
        doc = str(values["__doc__"])
        number = int(path.name[:4])
        assert path.stem == values["revision"] and number > last_number, path.name
        last_number = number
        assert values["down_revision"] == previous, path.name
        assert f"Revision ID: {values['revision']}" in doc
        assert f"Revises: {previous}" in doc if previous else "Revises: (none" in doc
        owner = re.search(r"owner: ``([\w/.]+\.py)``", doc)
        assert owner, f"{path.name}: the docstring names no owner module"
        owned = set(re.findall(r'__tablename__ = "(\w+)"', (ROOT / owner.group(1)).read_text()))
        touched = set(TOUCHES.findall(path.read_text()))
        assert touched and touched <= owned, f"{path.name} changes {touched - owned}, not in {owner.group(1)}"
        previous = values["revision"]
    assert previous == db.head_revision()


def test_the_migrations_build_exactly_every_packages_tables(workspace: Workspace) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from omnicurate.schema import all_tables

    with workspace.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), all_tables())
    assert differences == []


def test_a_workspace_stamped_with_the_old_head_opens_and_keeps_its_data(
    make_workspace: Callable[[str], Workspace],
) -> None:
    ws = make_workspace("old")
    ws.add_person("ann", ["author"], actor="test")
    from alembic import command

    with ws.engine.begin() as conn:
        command.downgrade(db._alembic_config(conn), "0005_checker")  # the schema the old head built
        conn.exec_driver_sql(f"UPDATE alembic_version SET version_num = '{OLD_HEAD}'")
    ws.close()
    reopened = Workspace.open(ws.root)
    assert db.current_revision(reopened.engine) == db.head_revision()
    with reopened.session() as s:
        assert [p.name for p in s.execute(select(Person)).scalars()] == ["ann"]
    reopened.close()


def test_a_workspace_part_way_along_the_old_chain_is_upgraded_to_the_head(
    make_workspace: Callable[[str], Workspace],
) -> None:
    """Old 0004_labelstudio is new 0002_labelstudio: the release, audit and checker tables are added on open."""
    from alembic import command
    from sqlalchemy import inspect

    ws = make_workspace("partial")
    with ws.engine.begin() as conn:
        command.downgrade(db._alembic_config(conn), "0002_labelstudio")
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0004_labelstudio'")
    assert not inspect(ws.engine).has_table("probe_result")
    ws.close()
    reopened = Workspace.open(ws.root)
    assert db.current_revision(reopened.engine) == db.head_revision()
    tables = set(inspect(reopened.engine).get_table_names())
    assert {"ls_task", "release", "media_signature", "probe_result"} <= tables
    reopened.close()


def test_a_workspace_from_before_media_facts_gains_their_table_empty(
    make_workspace: Callable[[str], Workspace],
) -> None:
    """0019 adds media_fact; an older workspace's facts are measured on first need (tests/exports)."""
    from alembic import command
    from sqlalchemy import inspect

    ws = make_workspace("before_facts")
    with ws.engine.begin() as conn:
        command.downgrade(db._alembic_config(conn), "0018_candidate_origin")
    assert not inspect(ws.engine).has_table("media_fact")
    ws.close()
    reopened = Workspace.open(ws.root)
    assert db.current_revision(reopened.engine) == db.head_revision()
    with reopened.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM media_fact").scalar() == 0
    reopened.close()
