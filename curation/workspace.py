"""A workspace: a folder with ``curate.toml``, a database and a media store."""

from __future__ import annotations

import functools
import hashlib
import re
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Engine, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, col

from . import db
from .config import CONFIG_NAME, Settings
from .errors import NotFoundError, PermissionDenied, Problem, ValidationFailed, WorkspaceError
from .media import MediaStore
from .release_claims import write_template
from .tables import Asset, Event, Item, Person, utcnow
from .vocab import ROLES

PERSON_NAME = re.compile(r"[A-Za-z0-9._:\-]{1,200}")
"""A person's name as review and item files carry it (``Identifier`` in schema.py)."""


class Workspace:
    """Opened once per command; cheap to construct, the engine connects lazily."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self.url = db.resolve_url(settings.database.url, root)
        self._engine: Engine | None = None
        self._local = threading.local()  # this thread's all_or_nothing() transaction, if any
        self.media = MediaStore(root / "media")

    # ----- creation and opening -------------------------------------------------------------
    @classmethod
    def init(cls, root: Path, db_url: str | None = None) -> Workspace:
        """Create a workspace folder (or upgrade an existing one in place)."""
        root = root.resolve()
        config_path = root / CONFIG_NAME
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} is a file, not a folder; give `curate init` a new or existing folder")
        if config_path.exists():
            ws = cls.open(root)
            if db_url and db_url != ws.settings.database.url:
                raise WorkspaceError(
                    f"{root} is already a workspace on {ws.settings.database.url}; "
                    "edit curate.toml to move it to another database"
                )
            return ws
        settings = Settings()
        if db_url:
            settings.database.url = db_url
        ws = cls(root, settings)  # a bad URL is refused before anything is created
        try:
            root.mkdir(parents=True, exist_ok=True)
            ws.media.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(f"cannot create the workspace folder {root}: {exc.strerror}") from exc
        try:
            db.upgrade(ws.engine)
        except OperationalError as exc:
            raise WorkspaceError(
                f"cannot open the database {settings.database.url!r} ({str(exc.orig).strip().splitlines()[0]}); "
                "check the URL and that the database server is running"
            ) from exc
        except IntegrityError as exc:
            raise WorkspaceError(
                f"another command created the schema of {settings.database.url!r} at the same time; "
                "run `curate init` again"
            ) from exc
        settings.save(config_path)
        write_template(root)  # claims nothing until the maintainer writes in it
        return ws

    @classmethod
    def open(cls, root: Path) -> Workspace:
        root = root.resolve()
        config_path = root / CONFIG_NAME
        if not config_path.is_file():
            raise WorkspaceError(
                f"{root} is not a workspace (no {CONFIG_NAME}); create one with `curate init {root}` "
                "or choose one with -w DIR / CURATE_WORKSPACE"
            )
        ws = cls(root, Settings.load(config_path))
        try:
            ws.ensure_schema()
        except OperationalError as exc:
            raise WorkspaceError(
                f"cannot open the database of {root} ({str(exc.orig).strip().splitlines()[0]}); check [database] "
                f"url in {config_path} and that the database server is running"
            ) from exc
        if any((ws.media.root / MediaStore.STAGING).glob("*")):
            ws.recover_media()  # a writer died: finish or undo its media
        return ws

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = db.make_engine(self.url)
        return self._engine

    def ensure_schema(self) -> None:
        """Upgrade an older workspace in place; refuse one newer than this program."""
        current = db.current_revision(self.engine)
        head = db.head_revision()
        if current == head:
            return
        try:
            db.upgrade(self.engine)
        except Exception as exc:  # alembic raises plain errors for unknown revisions
            raise WorkspaceError(
                f"cannot upgrade the workspace database from schema {current} to {head}: {exc}"
            ) from exc

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    # ----- sessions -------------------------------------------------------------------------
    def session(self) -> Session:
        """A read session (use ``writing()`` for changes); inside :meth:`all_or_nothing`, that transaction's
        session, so that a step reads what the earlier steps of the same import wrote."""
        active = self._batch()
        if active is not None:
            return cast(Session, _Borrowed(active))  # used as `with ws.session() as s` only
        return Session(self.engine, expire_on_commit=False)

    @contextmanager
    def writing(self) -> Iterator[Session]:
        """A serialized write transaction; everything in it commits or nothing does.

        Inside :meth:`all_or_nothing` it is a savepoint of that transaction: a refused step undoes only itself,
        and nothing commits before the whole batch does."""
        active = self._batch()
        if active is not None:
            with active.begin_nested():
                yield active
            return
        with db.write_session(self.engine) as session:
            yield session

    @contextmanager
    def all_or_nothing(self) -> Iterator[Session]:
        """One write transaction around many steps that each call ``writing()`` (an import's lines): every step
        is kept or none is. The shared path of every import, so that no kind keeps the lines before a refused one."""
        active = self._batch()
        if active is not None:
            yield active
            return
        with db.write_session(self.engine) as session:
            self._local.batch = session
            try:
                yield session
            finally:
                self._local.batch = None

    def _batch(self) -> Session | None:
        return getattr(self._local, "batch", None)

    def recover_media(self) -> None:
        with self.session() as s:
            referenced = s.execute(select(col(Asset.sha256), col(Asset.ext))).all()
        self.media.recover((sha, ext) for sha, ext in referenced)

    def asset_path(self, asset: Asset) -> Path:
        return self.media.path(asset.sha256, asset.ext)

    # ----- people ---------------------------------------------------------------------------
    def add_person(self, name: str, roles: list[str], email: str | None = None, actor: str = "cli") -> Person:
        if not PERSON_NAME.fullmatch(name):
            raise ValidationFailed(
                [
                    Problem(
                        f"{name!r} cannot name a person: use 1 to 200 letters, digits and . _ : - (the names "
                        "review files can carry)",
                        field="name",
                    )
                ]
            )
        bad = [r for r in roles if r not in ROLES]
        if bad:
            raise ValidationFailed(
                [Problem(f"unknown role {r!r}; roles are {', '.join(ROLES)}", field="role") for r in bad]
            )
        if not roles:
            raise ValidationFailed([Problem("give at least one --role", field="role")])
        with self.writing() as s:
            person = s.get(Person, name)
            before = _person_view(person) if person else None
            if person is None:
                person = Person(name=name, roles=",".join(sorted(set(roles))), email=email)
            else:
                person.roles = ",".join(sorted(person.role_set | set(roles)))
                if email:
                    person.email = email
            s.add(person)
            after = _person_view(person)
            if before != after:
                record_event(s, actor, "person.saved", f"person:{name}", before, after)
        return person

    def set_abilities(
        self, name: str, languages: list[str] | None = None, can: list[str] | None = None, actor: str = "cli"
    ) -> Person:
        """Set the languages NAME reads and the stages they are qualified for (``None``: leave as is; ``[]``:
        clear), checked by ``curation.abilities``; recorded as an event."""
        from .abilities import parse_languages, parse_stages

        langs = None if languages is None else parse_languages(languages)
        stages = None if can is None else parse_stages(can)
        with self.writing() as s:
            person = s.get(Person, name)
            if person is None:
                raise NotFoundError(f"no person named {name!r}; add them with `curate people add {name} --role ...`")
            before = _person_view(person)
            if langs is not None:
                person.languages = ",".join(langs)
            if stages is not None:
                person.can = ",".join(stages)
            s.add(person)
            after = _person_view(person)
            if before != after:
                record_event(s, actor, "person.saved", f"person:{name}", before, after)
        return person

    def people(self) -> list[Person]:
        with self.session() as s:
            return list(s.exec(select(Person).order_by(Person.name)).scalars())  # type: ignore[call-overload]

    def person(self, name: str) -> Person:
        with self.session() as s:
            person = s.get(Person, name)
        if person is None:
            raise NotFoundError(f"no person named {name!r}; add them with `curate people add {name} --role ...`")
        return person

    def set_password(self, name: str, password: str, actor: str = "cli") -> None:
        if len(password) < 8:
            raise ValidationFailed([Problem("a password needs at least 8 characters", field="password")])
        with self.writing() as s:
            person = s.get(Person, name)
            if person is None:
                raise NotFoundError(f"no person named {name!r}")
            person.password_hash = hash_password(password)
            s.add(person)
            record_event(s, actor, "person.password_set", f"person:{name}", None, None)

    def check_password(self, name: str, password: str) -> Person:
        person = self.person(name)
        if not person.password_hash or not verify_password(password, person.password_hash):
            raise PermissionDenied(f"wrong password for {name!r} (or none set: `curate people passwd {name}`)")
        return person

    def require_role(self, name: str, role: str) -> Person:
        person = self.person(name)
        if role not in person.role_set:
            raise PermissionDenied(f"{name} does not have the {role} role (roles: {person.roles or 'none'})")
        return person

    # ----- items ----------------------------------------------------------------------------
    def item(self, item_id: str) -> Item:
        with self.session() as s:
            item = s.get(Item, item_id)
        if item is None:
            raise NotFoundError(f"no item {item_id!r} in this workspace")
        return item

    def events(self, subject: str) -> list[Event]:
        with self.session() as s:
            rows = s.execute(select(Event).where(col(Event.subject) == subject).order_by(col(Event.id))).scalars()
            return list(rows)


class _Borrowed:
    """The batch's session lent to a ``with ws.session() as s`` block: leaving the block does not close it."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def __enter__(self) -> Session:
        return self._session

    def __exit__(self, *exc: object) -> None:
        return None


def _person_view(person: Person | None) -> dict[str, Any] | None:
    if person is None:
        return None
    view: dict[str, Any] = {"roles": person.roles, "email": person.email}
    if person.languages:
        view["languages"] = person.languages
    if person.can:
        view["can"] = person.can
    return view


def record_event(
    session: Session,
    actor: str,
    action: str,
    subject: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> None:
    """Append to the permanent event log, inside the caller's transaction."""
    session.add(Event(actor=actor, action=action, subject=subject, before=before, after=after))


def event_row(
    actor: str, action: str, subject: str, before: dict[str, Any] | None, after: dict[str, Any] | None
) -> dict[str, Any]:
    """An event as ``record_event`` stores it, as a row for a bulk write (``curation.db.insert_rows``)."""
    return dict(at=utcnow(), actor=actor, action=action, subject=subject, before=before, after=after)


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    return f"scrypt$16384$8$1${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        _, n, r, p, salt, digest = stored.split("$")
        candidate = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p))
    except ValueError:
        return False
    return secrets.compare_digest(candidate.hex(), digest)


@functools.cache
def dummy_password_hash() -> str:
    """A hash of no one's password, made once per process with :func:`hash_password`'s parameters."""
    return hash_password(secrets.token_urlsafe(16))


def check_password(password: str, stored: str | None) -> bool:
    """Whether PASSWORD matches a stored hash; with no stored hash (an unknown name, a person without a
    password) the same work is done against :func:`dummy_password_hash` and the answer is no, so that the time
    a refusal takes does not tell which names exist."""
    if not stored:
        verify_password(password, dummy_password_hash())
        return False
    return verify_password(password, stored)
