"""One real Label Studio server per test session, started on a copy of the migrated template data folder.

``.ci/setup.d/40-labelstudio.sh`` installs the server in its own virtual environment and makes the template
(three users with known tokens); it exports LABEL_STUDIO_BIN and LABEL_STUDIO_TEMPLATE. In CI (CI=true) a
missing server fails these tests; elsewhere they are skipped with the command that sets it up.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from curation.workspace import Workspace

REPO = Path(__file__).resolve().parents[3]
IN_CI = os.environ.get("CI") == "true"


@dataclass
class LsServer:
    url: str
    document_root: Path
    users: list[dict[str, str]]
    log: Path

    @property
    def token(self) -> str:
        return self.users[0]["token"]

    def client(self, token: str | None = None) -> Any:
        from label_studio_sdk import LabelStudio

        return LabelStudio(base_url=self.url, api_key=token or self.token)

    def user_id(self, email: str) -> int:
        """The id of the user with this e-mail, created (without a token) the first time it is asked for."""
        client = self.client()
        for user in client.users.list():
            if user.email == email:
                return int(user.id)
        return int(client.users.create(username=email.split("@")[0], email=email, password="annotator-pass-1").id)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _unavailable(message: str) -> None:
    if IN_CI:
        pytest.fail(f"CI=true but {message}: .ci/setup.d/40-labelstudio.sh must install the Label Studio server")
    pytest.skip(f"{message}; run `bash .ci/setup.d/40-labelstudio.sh` to set up a Label Studio server")


@pytest.fixture(scope="session")
def ls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LsServer]:
    binary = Path(os.environ.get("LABEL_STUDIO_BIN") or REPO / ".venvs/labelstudio/bin/label-studio")
    template = Path(os.environ.get("LABEL_STUDIO_TEMPLATE") or REPO / ".venvs/labelstudio-template")
    if not binary.is_file():
        _unavailable(f"no label-studio executable at {binary} (LABEL_STUDIO_BIN)")
    manifest = template / "omnicurate-users.json"
    if not manifest.is_file():
        _unavailable(f"no template data folder at {template} (LABEL_STUDIO_TEMPLATE)")

    root = tmp_path_factory.mktemp("labelstudio")
    shutil.copytree(template, root / "instance")
    document_root = root / "files"
    document_root.mkdir()
    port = _free_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(root / "instance/home"),
        "LABEL_STUDIO_BASE_DATA_DIR": str(root / "instance/data"),
        "LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED": "true",
        "LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT": str(document_root),
        "LATEST_VERSION_CHECK": "false",
        "COLLECT_ANALYTICS": "false",
        "SENTRY_DSN": "",
        "FRONTEND_SENTRY_DSN": "",
    }
    log = root / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(binary), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"Label Studio exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"Label Studio did not answer on {url} within 180 s:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield LsServer(url, document_root, json.loads(manifest.read_text())["users"], log)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.fixture
def ls_env(ls_server: LsServer, monkeypatch: pytest.MonkeyPatch) -> LsServer:
    """Point the bridge at the session's server (as a maintainer would with the environment)."""
    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server.token)
    monkeypatch.setenv("LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT", str(ls_server.document_root))
    return ls_server


@pytest.fixture
def connection(ls_env: LsServer, workspace: Workspace):  # type: ignore[no-untyped-def]
    from annotation_ui.labelstudio.connection import Connection

    return Connection.resolve(workspace.settings.labelstudio)
