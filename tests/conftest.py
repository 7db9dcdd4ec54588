"""Shared fixtures: workspaces on SQLite and PostgreSQL, and the markers that say what a test needs.

Markers (pyproject.toml) select tests, not the environment: ``service`` (PostgreSQL, Label Studio, vLLM),
``browser`` (headless Chromium), ``gpu`` (an accelerator), ``slow`` (a minute or more). A developer deselects
with ``-m "not service"``; a test whose service is missing is skipped with the way to set it up, except in CI
(CI=true), where it fails. Optional tools and extras (ffmpeg, fpcalc, torch, lm-format-enforcer) are the same:
``require_tool`` / ``require_module`` skip with the command that installs them, and fail under CI=true.
"""

from __future__ import annotations

import fcntl
import functools
import importlib
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, NoReturn

import pytest

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
"""The suite keeps bytecode even where the environment says not to (this project's machines set
PYTHONDONTWRITEBYTECODE=1): every pytest-xdist worker and every ``curate`` process a test starts imports the same
modules, and without their cached bytecode each compiled them again (collection took 10.9 CPU-s a worker instead
of 4.6). Set before the project's modules are imported, so they are cached too."""

import typer.testing  # noqa: E402

typer.testing._get_command = functools.cache(typer.testing._get_command)  # type: ignore[attr-defined]
"""``CliRunner().invoke(app, ...)`` turns the whole ``curate`` app into a click command again on every call (0.1-0.3
CPU-s: typer reads every command's signature and type hints); the command does not change within a test run, so
each app is turned once. Commands are stateless between invocations (click makes a new context for each)."""

import curation.workspace  # noqa: E402
from curation.workspace import Workspace  # noqa: E402
from devsupport.xdist_groups import name_groups_in_nodeids  # noqa: E402

if TYPE_CHECKING:
    from tests.docs.curate_server import CurateServer

os.environ.setdefault("OMP_NUM_THREADS", "1")
"""One OpenMP thread per test process, set before anything imports torch: the tiny models gain nothing from more,
and torch's default of one spinning thread per core, in two pytest-xdist workers beside each other (or beside any
other load), turned a 14 s test into 235-394 s on the 2-core machine."""
ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("CURATE_TEST_PG_URL", "")
IN_CI = os.environ.get("CI") == "true"
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.service)]
SERVICE_FIXTURES = {
    "ls_server": ("service",),
    "vllm_python": ("service", "slow"),
    "streamlit_server": ("browser",),
    "serve_app": ("browser",),
}
"""Fixtures that start or need a service: every test using one (directly or through another) gets its marks."""
ONE_WORKER_FIXTURES = {"vllm_python": "vllm"}
"""Session fixtures too heavy to start once per pytest-xdist worker (a vLLM server takes a core and a minute):
every test using one joins its ``xdist_group``, which ``--dist loadgroup`` sends to a single worker."""
ONE_WORKER_MARKS = {"browser": "browser"}
"""Marks whose tests run one after another on one worker: a browser test and its Streamlit server take both
cores of a small machine for a moment, and two at once only make each other wait (the other worker runs the
rest meanwhile)."""


_hash_once = functools.cache(curation.workspace.hash_password)


@pytest.fixture(autouse=True)
def _one_scrypt_per_password(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Workspace.set_password`` hashes each password once per test process: the tests give every person of a
    team the same password, and each scrypt costs 50 ms by design (a UI test's team of eight paid 0.4 s before it
    began). The stored hash is a real one (signing in checks it with scrypt, as always); people with the same
    password share its salt, in tests only. Tests of ``hash_password`` itself import the real function."""
    monkeypatch.setattr(curation.workspace, "hash_password", _hash_once)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Before ``-m`` deselects (pytest's own hook runs after a conftest's), so the marks given here select too."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for fixture, marks in SERVICE_FIXTURES.items():
            if fixture in used:
                for mark in marks:
                    item.add_marker(mark)
        groups = [group for fixture, group in ONE_WORKER_FIXTURES.items() if fixture in used]
        groups += [group for mark, group in ONE_WORKER_MARKS.items() if item.get_closest_marker(mark)]
        if groups:
            item.add_marker(pytest.mark.xdist_group(groups[0]))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """In a pytest-xdist worker under ``--dist loadgroup``: name each test's group in its nodeid before the worker
    reports them (pytest-xdist 3.8 does not, with pytest 9.2; devsupport/xdist_groups.py)."""
    if getattr(session.config.option, "loadgroup", False):
        name_groups_in_nodeids(session.items)


def missing_service(message: str, marker: str = "service") -> None:
    """Fail in CI, else skip saying how to set the service up or deselect it."""
    if IN_CI:
        pytest.fail(f"CI=true but {message}")
    pytest.skip(f"{message} (or deselect these tests with -m 'not {marker}')")


def missing_tool(message: str) -> NoReturn:
    """An optional tool or extra is absent: fail in CI (which installs them all), else skip saying how to add it."""
    if IN_CI:
        pytest.fail(f"CI=true but {message}")
    pytest.skip(message)


INSTALL_TORCH = (
    "pip install torch==2.13.0 transformers tokenizers && pip install --no-deps torchvision==0.28.0 "
    "(bash .ci/setup.d/40-checker.sh does this)"
)
INSTALL_CHECKER = "pip install -e '.[checker]' after a CPU torch (bash .ci/setup.d/40-checker.sh does both)"
INSTALL_TOOLS = {
    "ffmpeg": "apt-get install ffmpeg",
    "ffprobe": "apt-get install ffmpeg",
    "fpcalc": "apt-get install libchromaprint-tools",
    "sox": "apt-get install sox",
    "espeak-ng": "apt-get install espeak-ng",
}
"""How each optional system tool is installed (.ci/run installs them all)."""


def require_tool(name: str) -> str:
    """The tool's path; when it is not on the PATH, skip (fail under CI=true) with the command that installs it."""
    found = shutil.which(name)
    if found is None:
        missing_tool(f"{name} is not on the PATH: {INSTALL_TOOLS.get(name, 'install it')}")
    return found


def require_module(name: str, install: str) -> ModuleType:
    """An optional Python package, imported; when it is absent, skip (fail under CI=true) saying ``install``."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing_tool(f"{name} cannot be imported ({exc}): {install}")


def _pg_database() -> tuple[str, Callable[[], None]]:
    """A fresh, empty PostgreSQL database and a function that drops it."""
    if not PG_URL:
        missing_service("CURATE_TEST_PG_URL is not set: start PostgreSQL and point it there (.ci/run does)")
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"oc_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return url, drop


@pytest.fixture(params=BACKENDS)
def db_backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make_workspace(tmp_path: Path, db_backend: str, empty_templates: dict) -> Iterator[Callable[[str], Workspace]]:
    """Factory: ``make_workspace("name")`` creates a fresh workspace on the test's database backend (a copy of
    the process's new workspace: what ``Workspace.init`` makes, without running the migrations each time)."""
    cleanups: list[Callable[[], None]] = []
    opened: list[Workspace] = []

    def make(name: str = "ws") -> Workspace:
        root = tmp_path / name
        if root.exists():  # the test put files there first: make the workspace in place
            url = None
            if db_backend == "postgres":
                url, drop = _pg_database()
                cleanups.append(drop)
            ws = Workspace.init(root, url)
        else:
            template, template_db = empty_templates[db_backend]
            ws = clone_workspace(template, root, template_db)
            if template_db is not None:
                cleanups.append(functools.partial(drop_database, ws.settings.database.url))
        opened.append(ws)
        return ws

    yield make
    for ws in opened:
        ws.close()
    for cleanup in cleanups:
        cleanup()


@pytest.fixture
def workspace(make_workspace: Callable[[str], Workspace]) -> Workspace:
    return make_workspace("ws")


@pytest.fixture(scope="session")
def curate_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CurateServer | None]:
    """Real ``curate`` processes forked from one that has imported the libraries (tests/docs/curate_server.py),
    once per test process: the manual's examples and the tests that start several commands at once use it; None
    with OMNICURATE_DOCS_REAL_CURATE=1 (each command an interpreter of its own)."""
    from tests.docs.curate_server import start
    from tests.docs.manual_examples import environment

    if os.environ.get("OMNICURATE_DOCS_REAL_CURATE") == "1":
        yield None
        return
    folder = tmp_path_factory.mktemp("curate-server")
    (folder / ".home").mkdir()
    server = start(folder, environment(folder / ".home"))
    yield server
    server.stop()


@pytest.fixture
def curate_process(curate_server: CurateServer | None) -> Callable[..., subprocess.Popen[str]]:
    """``curate ARGS`` started as a process of its own, its output and errors piped (text), this process's
    environment and ENV: forked by the ``curate_server`` (0.1-0.2 CPU-s a command instead of 0.5-0.6 for a fresh
    interpreter), so tests of commands running at the same time start many of them cheaply."""
    from tests.docs.curate_server import SOCKET_VARIABLE

    def start(*args: str, env: Mapping[str, str] = MappingProxyType({})) -> subprocess.Popen[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT), **env}
        if curate_server is None:
            command = [sys.executable, "-m", "omnicurate", *args]
        else:
            command = [str(curate_server.bin / "curate"), *args]
            env[SOCKET_VARIABLE] = str(curate_server.socket)
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    return start


ABSOLUTE_PATH_COLUMNS = {"release": ("path",), "candidate": ("current_image", "next_image")}
"""The only columns that hold a path inside the workspace written absolute (a release's folder, a story
candidate's page images): ``clone_workspace`` moves them to the copy. A template that holds its folder's path
anywhere else fails its build (``_check_paths``), naming the column to add here."""


def clone_workspace(template: Path, root: Path, template_db: str | None = None) -> Workspace:
    """A copy of the closed workspace at TEMPLATE, at ROOT: its folder copied, and on PostgreSQL (TEMPLATE_DB, the
    template's database URL) a new database made from the template's (``CREATE DATABASE ... TEMPLATE``).

    Copying is what building the same workspace again would give, in a fraction of the time: a workspace holds no
    absolute path but those of ``ABSOLUTE_PATH_COLUMNS``, which are moved to the copy's folder. A SQLite database
    is copied through SQLite's backup API, not as files: a template another test process is reading (the manual's
    claims read the demos in place) has a ``-wal`` and ``-shm`` file that come and go with its connections."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from curation.config import CONFIG_NAME

    databases = {path.name for path in template.glob("*.db")}
    sqlite_files = {f"{name}{suffix}" for name in databases for suffix in ("", "-wal", "-shm", "-journal")}
    shutil.copytree(
        template,
        root,
        symlinks=True,
        ignore=lambda folder, names: sqlite_files & set(names) if folder == str(template) else set(),
    )
    for name in databases:
        original = sqlite3.connect(f"{(template / name).as_uri()}?mode=ro", uri=True)
        with closing(original), closing(sqlite3.connect(root / name)) as copy:
            original.backup(copy)
    if template_db is not None:
        source = make_url(template_db).database
        name = f"oc_{uuid.uuid4().hex[:12]}"
        admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{source}"'))
        admin.dispose()
        config = root / CONFIG_NAME
        url = make_url(template_db).set(database=name).render_as_string(hide_password=False)
        config.write_text(config.read_text(encoding="utf-8").replace(template_db, url), encoding="utf-8")
    ws = Workspace.open(root)
    moves = {"old": str(template.resolve()), "new": str(root.resolve())}
    with ws.engine.begin() as conn:
        for table, columns in ABSOLUTE_PATH_COLUMNS.items():
            assignments = ", ".join(f"{column} = replace({column}, :old, :new)" for column in columns)
            conn.execute(text(f'UPDATE "{table}" SET {assignments}'), moves)
    return ws


def _check_paths(root: Path) -> None:
    """Fail when the SQLite workspace at ROOT holds its folder's path outside ``ABSOLUTE_PATH_COLUMNS``: a copy
    would read or write the template's files through it."""
    import sqlite3
    from contextlib import closing

    found = []
    with closing(sqlite3.connect(root / "curate.db")) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for column in (row[1] for row in db.execute(f'PRAGMA table_info("{table}")')):
                if column in ABSOLUTE_PATH_COLUMNS.get(table, ()):
                    continue
                query = f'SELECT count(*) FROM "{table}" WHERE instr(CAST("{column}" AS TEXT), ?) > 0'
                if db.execute(query, (str(root.resolve()),)).fetchone()[0]:
                    found.append(f"{table}.{column}")
    assert not found, f"the workspace's own path is stored in {found}: add them to ABSOLUTE_PATH_COLUMNS"


class WorkspaceTemplates(dict):  # type: ignore[type-arg]
    """backend -> (folder, database URL or None) of a closed workspace built on first use by ``build(root)``.

    With SHARED (a folder all pytest-xdist workers of the run see), the SQLite template is built once per run,
    by the first worker to ask, under a lock; otherwise once per test process."""

    def __init__(self, base: Path, build: Callable[[Path], None], shared: Path | None = None) -> None:
        super().__init__()
        self.base, self.build, self.shared, self.drops = base, build, shared, []

    def __missing__(self, backend: str) -> tuple[Path, str | None]:
        if backend == "sqlite" and self.shared is not None:
            root = self.shared / "ws"
            self.shared.mkdir(parents=True, exist_ok=True)
            with open(self.shared.with_suffix(".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not (self.shared / "built").exists():
                    shutil.rmtree(root, ignore_errors=True)
                    self.build(root)
                    _check_paths(root)
                    (self.shared / "built").touch()
            self[backend] = (root, None)
            return self[backend]
        root = self.base / backend / "ws"
        url = None
        if backend == "postgres":
            url, drop = _pg_database()
            self.drops.append(drop)
            Workspace.init(root, url).close()
        self.build(root)
        self[backend] = (root, url)
        return self[backend]


@pytest.fixture(scope="session")
def empty_templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkspaceTemplates]:
    """A new workspace per test process and backend, migrated once; ``make_workspace`` hands out copies."""
    templates = WorkspaceTemplates(tmp_path_factory.mktemp("empty-template"), lambda root: Workspace.init(root).close())
    yield templates
    for drop in templates.drops:
        drop()


DEMOS = ("mcq", "story", "judge")
"""The kinds whose bundled demo ``demo_templates`` builds."""


def _build_demo(kind: str, root: Path) -> None:
    """A new folder: ``curate demo --kind KIND ROOT``, which must succeed. A PostgreSQL workspace already made
    there: the demo's build function, closed after (the command leaves its connections to the collector, and
    ``CREATE DATABASE ... TEMPLATE`` refuses a database still in use)."""
    from typer.testing import CliRunner

    from omnicurate.cli.main import app
    from omnicurate.demo import build_demo
    from omnicurate.demo.judge import build_judge_demo
    from omnicurate.demo.story import build_story_demo

    if root.exists():
        build = {"mcq": build_demo, "story": build_story_demo, "judge": build_judge_demo}[kind]
        build(root, log=lambda _msg: None).close()
        return
    result = CliRunner().invoke(app, ["demo", str(root), "--kind", kind], catch_exceptions=False)
    assert result.exit_code == 0, result.output


class DemoTemplates(dict[str, WorkspaceTemplates]):
    """Each kind's bundled demo (``mcq``, ``story``, ``judge``), built once on first use (SQLite: once per run,
    shared by the pytest-xdist workers; PostgreSQL: once per test process); tests take copies of their own."""

    def __init__(self, base: Path, shared: Path) -> None:
        super().__init__(
            {
                kind: WorkspaceTemplates(base / kind, functools.partial(_build_demo, kind), shared / kind)
                for kind in DEMOS
            }
        )
        self.copies: list[str] = []

    def copy(self, kind: str, root: Path, backend: str = "sqlite") -> Workspace:
        """The KIND demo, in a workspace of its own at ROOT on BACKEND (open; the caller closes it)."""
        template, template_db = self[kind][backend]
        ws = clone_workspace(template, root, template_db)
        if template_db is not None:
            self.copies.append(ws.settings.database.url)
        return ws

    def discard(self, ws: Workspace) -> None:
        """Close a copy, and drop its database on PostgreSQL."""
        ws.close()
        if ws.settings.database.url in self.copies:
            self.copies.remove(ws.settings.database.url)
            drop_database(ws.settings.database.url)


@pytest.fixture(scope="session")
def demo_templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoTemplates]:
    """The bundled demos, built once (see ``DemoTemplates``); ``demo_workspace`` and ``demo_templates.copy(kind,
    root)`` hand out copies."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, which every worker's own folder is in
    templates = DemoTemplates(tmp_path_factory.mktemp("demo-template"), shared / "demo-templates")
    yield templates
    for url in templates.copies:
        drop_database(url)
    for kind in templates.values():
        for drop in kind.drops:
            drop()


@pytest.fixture
def demo_workspace(tmp_path: Path, db_backend: str, demo_templates: DemoTemplates) -> Iterator[Workspace]:
    """The bundled demo, in a fresh workspace of its own (on either backend): a copy of the template."""
    ws = demo_templates.copy("mcq", tmp_path / "demo", db_backend)
    yield ws
    demo_templates.discard(ws)


def drop_database(url: str) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
    admin.dispose()
