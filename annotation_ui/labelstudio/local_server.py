"""A local Label Studio for one maintainer: the pinned server in a virtual environment of its own, started on
127.0.0.1 with an API token (``curate ls up`` / ``curate ls down``).

Everything lives in one folder (default ``~/.local/share/omnicurate/labelstudio-<version>``): ``venv/``, the
server's data (``data/``), the folder media are published to (``files/``), ``server.log``, and
``server.json`` (port, pid, the account and its token; readable by its owner only). The server gets a clean
environment, since it reads bare variables such as ``PORT``, ``USERNAME`` and ``CI``.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from curation.errors import CurateError

LABEL_STUDIO_VERSION = "1.23.2"
"""The version the bridge is tested against (.ci/setup.d/40-labelstudio.sh pins the same)."""


def default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "omnicurate" / f"labelstudio-{LABEL_STUDIO_VERSION}"


@dataclass
class LocalServer:
    home: str
    url: str
    port: int
    pid: int
    email: str
    token: str
    document_root: str

    def exports(self) -> dict[str, str]:
        """The environment the bridge reads (``curate ls status`` checks it)."""
        return {
            "LABEL_STUDIO_URL": self.url,
            "LABEL_STUDIO_API_KEY": self.token,
            "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": self.document_root,
        }


def _state_file(home: Path) -> Path:
    return home / "server.json"


def _clean_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home / "home"),
        "LABEL_STUDIO_BASE_DATA_DIR": str(home / "data"),
        "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
        "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(home / "files"),
        "LATEST_VERSION_CHECK": "false",
        "COLLECT_ANALYTICS": "false",
        "SENTRY_DSN": "",
        "FRONTEND_SENTRY_DSN": "",
    }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:  # noqa: S310 (our own server)
            return response.status == 200
    except OSError:
        return False


def running(home: Path) -> LocalServer | None:
    """The server started from ``home``, when it still runs."""
    try:
        server = LocalServer(**json.loads(_state_file(home).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    return server if server.pid and _alive(server.pid) else None


def install(home: Path, log=print) -> Path:  # type: ignore[no-untyped-def]
    """The ``label-studio`` program of ``home/venv``, installing the pinned version there when needed."""
    venv = home / "venv"
    binary = venv / "bin" / "label-studio"
    check = [str(venv / "bin" / "python"), "-c", "import importlib.metadata as m; print(m.version('label-studio'))"]
    try:
        if (
            binary.is_file()
            and subprocess.run(check, capture_output=True, text=True).stdout.strip() == LABEL_STUDIO_VERSION
        ):
            return binary
    except OSError:
        pass
    log(f"installing label-studio {LABEL_STUDIO_VERSION} into {venv} (a few minutes, once)")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", f"label-studio=={LABEL_STUDIO_VERSION}"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise CurateError(f"pip could not install label-studio=={LABEL_STUDIO_VERSION}:\n{done.stderr[-2000:]}")
    return binary


def create_account(binary: Path, env: dict[str, str], account: Path, email: str) -> None:
    """Initialise the server's data folder with one account and API token, and keep them in ``account``.

    Values go as ``--option=value``: a random password starts with ``-`` one time in 64, and argparse would
    read ``--password -x`` as a missing value.
    """
    token = secrets.token_hex(20)
    password = secrets.token_urlsafe(12)
    init = subprocess.run(
        [str(binary), "init", "omnicurate", f"--username={email}", f"--password={password}",
         f"--user-token={token}", "--enable-legacy-api-token"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    if init.returncode != 0:
        raise CurateError(f"label-studio init failed:\n{(init.stdout + init.stderr)[-2000:]}")
    account.write_text(json.dumps({"email": email, "password": password, "token": token}), encoding="utf-8")
    account.chmod(0o600)


def start(
    home: Path,
    port: int = 8080,
    email: str = "maintainer@localhost",
    binary: Path | None = None,
    timeout_s: float = 300,
    log=print,  # type: ignore[no-untyped-def]
) -> LocalServer:
    """Install (once), initialise the data folder with an account and API token (once), start, wait until healthy."""
    home = home.resolve()
    already = running(home)
    if already is not None:
        return already
    home.mkdir(parents=True, exist_ok=True)
    binary = binary or install(home, log)
    env = _clean_env(home)
    (home / "files").mkdir(exist_ok=True)
    (home / "home").mkdir(exist_ok=True)
    account = home / "account.json"
    if not account.is_file():
        log("creating the server's data folder and an account (migrations: a minute or two, once)")
        create_account(binary, env, account, email)
    credentials = json.loads(account.read_text(encoding="utf-8"))
    url = f"http://127.0.0.1:{port}"
    if _healthy(url):
        raise CurateError(f"something already answers on {url}; choose another --port")
    with (home / "server.log").open("ab") as out:
        proc = subprocess.Popen(
            [str(binary), "start", "omnicurate", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port)],
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + timeout_s
    while not _healthy(url):
        if proc.poll() is not None:
            raise CurateError(f"Label Studio exited with {proc.returncode}; see {home / 'server.log'}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGTERM)
            raise CurateError(f"Label Studio did not answer on {url} in {timeout_s:.0f} s; see {home / 'server.log'}")
        time.sleep(0.5)
    server = LocalServer(
        str(home), url, port, proc.pid, credentials["email"], credentials["token"], str(home / "files")
    )
    state = _state_file(home)
    state.write_text(json.dumps(asdict(server), indent=2), encoding="utf-8")
    state.chmod(0o600)
    return server


def stop(home: Path, timeout_s: float = 30) -> LocalServer | None:
    """Stop the server started from ``home``; None when none was running."""
    home = home.resolve()
    server = running(home)
    _state_file(home).unlink(missing_ok=True)
    if server is None:
        return None
    try:
        os.killpg(server.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _alive(server.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(server.pid):
            os.killpg(server.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return server
