"""Database engines, write transactions and schema migrations (Alembic, run in-process)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Engine, create_engine, event, insert, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DataError, NoSuchModuleError, OperationalError
from sqlmodel import Session, SQLModel

from .errors import CurateError, WorkspaceError

MIGRATIONS = Path(__file__).parent / "migrations"
_WRITE_LOCK_KEY = 0x6F6D6E69  # "omni": one advisory lock serializes writers on PostgreSQL


WRITE_LOCK_TIMEOUT_S = 60
"""How long a writer waits for another writer's transaction before giving up with a named error."""

_ORJSON_STRICT = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
"""orjson refuses what ``json`` would write differently or refuse: dates, dataclasses, subclasses of str or int."""


def stored_json(value: Any) -> str:
    """How a JSON column's value is written: by orjson (an import writes ~130,000 of them at 10,000 items, and
    ``json`` took half of its database time), which reads back as the same value. ``json`` writes what orjson
    would not keep: not-a-number and infinities (orjson writes ``null``), integers past 64 bits, keys that are
    not strings, text that is not valid Unicode, and whatever ``json`` refuses, which it still refuses."""
    if value is None:  # an empty JSON column: a quarter of an import's JSON values
        return "null"
    try:
        written = orjson.dumps(value, option=_ORJSON_STRICT)
    except orjson.JSONEncodeError:
        return json.dumps(value)
    if b"null" in written:  # a None, or a float orjson could not keep: json writes either as it always did
        return json.dumps(value)
    return written.decode()


def parse_url(url: str) -> URL:
    """A SQLAlchemy URL, or a named error saying where the setting lives and what a URL looks like."""
    try:
        return make_url(url)
    except (ArgumentError, ValueError) as exc:
        raise WorkspaceError(
            f"curate.toml: [database] url = {url!r} is not a database URL; use e.g. 'sqlite:///curate.db' or "
            "'postgresql+psycopg://USER@HOST:PORT/DATABASE'"
        ) from exc


def resolve_url(url: str, root: Path) -> str:
    """Make a relative SQLite path relative to the workspace folder; refuse a database that cannot persist."""
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite" and _in_memory(parsed):
        raise WorkspaceError(
            f"[database] url {url!r} is an in-memory SQLite database: nothing would persist after the command; "
            "use a file, e.g. 'sqlite:///curate.db', or a PostgreSQL URL"
        )
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        db_path = Path(parsed.database)
        if not db_path.is_absolute():
            parsed = parsed.set(database=str((root / db_path).resolve()))
    return parsed.render_as_string(hide_password=False)


def _in_memory(parsed: URL) -> bool:
    """An SQLite URL whose database lives only as long as its connection (``:memory:``, no path, mode=memory)."""
    database = parsed.database or ""
    return (
        database in ("", ":memory:")
        or database.startswith("file::memory:")
        or "mode=memory" in database
        or parsed.query.get("mode") == "memory"
    )


def insert_rows(session: Session, table: type[SQLModel], rows: list[dict[str, Any]]) -> None:
    """One executemany INSERT of whole rows (every column given, as the ORM would store them): a bulk write
    without an ORM object per row, which cost more than the database at tens of thousands of rows."""
    if rows:
        session.execute(insert(table.__table__), rows)  # type: ignore[attr-defined]


def make_engine(url: str) -> Engine:
    """An engine with the settings concurrent writers need (WAL and busy timeout on SQLite)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(
            url,
            connect_args={"timeout": WRITE_LOCK_TIMEOUT_S, "check_same_thread": False},
            json_serializer=stored_json,
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
            dbapi_conn.isolation_level = None  # let SQLAlchemy's BEGIN below decide the lock mode
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute(f"PRAGMA busy_timeout={WRITE_LOCK_TIMEOUT_S * 1000}")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn) -> None:  # type: ignore[no-untyped-def]
            mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
            conn.exec_driver_sql(f"BEGIN {mode}")

        return engine
    if parsed.get_backend_name() != "postgresql":
        raise WorkspaceError(
            f"curate.toml: [database] url uses {parsed.drivername!r}; omnicurate supports SQLite "
            "('sqlite:///curate.db') and PostgreSQL ('postgresql+psycopg://USER@HOST:PORT/DATABASE')"
        )
    try:
        return create_engine(url, pool_pre_ping=True, json_serializer=stored_json)
    except (ModuleNotFoundError, NoSuchModuleError) as exc:
        raise WorkspaceError(
            f"the database driver for {parsed.drivername} is not installed: pip install 'omnicurate[postgres]'"
        ) from exc
    except ArgumentError as exc:
        raise WorkspaceError(f"curate.toml: [database] url is not usable ({exc}); fix it and try again") from exc


@contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """One write transaction, serialized against other writers; rolled back on any error.

    SQLite takes its write lock at BEGIN IMMEDIATE; PostgreSQL takes a transaction-scoped advisory
    lock, so two importers never interleave and a reader never sees half an import.
    """
    is_sqlite = engine.dialect.name == "sqlite"
    bound = engine.execution_options(sqlite_begin="IMMEDIATE") if is_sqlite else engine
    try:
        with Session(bound, expire_on_commit=False) as session, session.begin():
            if not is_sqlite:
                session.execute(text(f"SET LOCAL lock_timeout = '{WRITE_LOCK_TIMEOUT_S}s'"))
                session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _WRITE_LOCK_KEY})
            yield session
    except OperationalError as exc:
        if _is_lock_timeout(exc):
            raise WorkspaceError(
                f"another command has held the workspace's write lock for over {WRITE_LOCK_TIMEOUT_S} s; "
                "nothing was changed — wait for it to finish (or stop it), then run this again"
            ) from exc
        raise
    except DataError as exc:
        raise CurateError(
            f"the database refused a value ({_first_line(exc.orig)}); nothing was changed — fix the input and try again"
        ) from exc


def _is_lock_timeout(exc: OperationalError) -> bool:
    message = str(exc.orig).lower()
    return "database is locked" in message or "lock timeout" in message or getattr(exc.orig, "sqlstate", "") == "55P03"


def _first_line(error: object) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _alembic_config(connection):  # type: ignore[no-untyped-def]
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest migration, in one transaction where the database allows."""
    from alembic import command

    # Serialized like every writer, so that two `curate init` of one database wait for each other instead of
    # both creating the tables (IntegrityError on PostgreSQL, "database is locked" on SQLite).
    bound = engine.execution_options(sqlite_begin="IMMEDIATE") if engine.dialect.name == "sqlite" else engine
    with bound.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _WRITE_LOCK_KEY})
        command.upgrade(_alembic_config(connection), "head")


def current_revision(engine: Engine) -> str | None:
    """The schema revision stored in the database (plain SQL: importing Alembic costs 0.2 s per command)."""
    if not inspect(engine).has_table("alembic_version"):
        return None
    with engine.connect() as connection:
        return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


_ASSIGNMENT = re.compile(r"^(revision|down_revision)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|None)", re.M)


def head_revision() -> str:
    """The newest migration: the one no other migration names as its ``down_revision``."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in (MIGRATIONS / "versions").glob("*.py"):
        for key, double, single in _ASSIGNMENT.findall(script.read_text(encoding="utf-8")):
            value = double or single
            if value:
                (revisions if key == "revision" else parents).add(value)
    heads = revisions - parents
    if len(heads) != 1:
        raise WorkspaceError(f"the migrations have {len(heads)} heads ({', '.join(sorted(heads))}); expected one")
    return heads.pop()


def has_schema(engine: Engine) -> bool:
    return inspect(engine).has_table("alembic_version")
