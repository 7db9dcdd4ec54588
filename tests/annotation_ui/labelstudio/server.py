"""Start and stop a throwaway Label Studio server on a copy of the template data folder (tests, benchmarks).

``.ci/setup.d/40-labelstudio.sh`` makes the server's virtual environment and the template (three users
with known tokens) and exports LABEL_STUDIO_BIN and LABEL_STUDIO_TEMPLATE; without them the defaults under
the newest ``/opt/omnicurate/labelstudio-<version>-<key>/`` is used. The server runs with a clean environment (it reads bare USERNAME, PORT, CI...).
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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]


class ServerUnavailable(RuntimeError):
    """No server could be started: not installed, or it did not come up (the message says which)."""


@dataclass
class LsServer:
    url: str
    document_root: Path
    users: list[dict[str, str]]
    log: Path
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def token(self) -> str:
        return self.users[0]["token"]

    def client(self, token: str | None = None) -> Any:
        from label_studio_sdk import LabelStudio

        return LabelStudio(base_url=self.url, api_key=token or self.token)

    def user_id(self, email: str) -> int:
        """The id of the user with this e-mail (signed up the first time it is asked for)."""
        self.annotator_token(email)
        for user in self.client().users.list():
            if user.email == email:
                return int(user.id)
        raise AssertionError(f"{email} signed up but is not listed")

    def annotator_token(self, email: str) -> str:
        """An annotator's own API token: template users have one; others sign up through the web form, as people do."""
        for user in self.users:
            if user["email"] == email:
                return user["token"]
        if email not in self.tokens:
            import httpx

            with httpx.Client(base_url=self.url, timeout=30) as web:
                web.get("/user/signup/")
                signed = web.post(
                    "/user/signup/",
                    data={
                        "email": email,
                        "password": "annotator-pass-1",
                        "csrfmiddlewaretoken": web.cookies.get("csrftoken", ""),
                    },
                    headers={"Referer": f"{self.url}/user/signup/"},
                )
                assert signed.status_code == 302, f"signing up {email}: HTTP {signed.status_code}"
                answer = web.get("/api/current-user/token")
                assert answer.status_code == 200, f"token of {email}: HTTP {answer.status_code} {answer.text[:200]}"
                self.tokens[email] = answer.json()["token"]
        return self.tokens[email]

    def annotator(self, email: str) -> Any:
        """An SDK client acting as the annotator with this e-mail."""
        return self.client(self.annotator_token(email))

    def http(self, email: str) -> Any:
        """A bare HTTP client with the annotator's token, for requests the SDK does not make (``/next``, PATCH data)."""
        import httpx

        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Token {self.annotator_token(email)}"}, timeout=30
        )


def installed() -> tuple[Path, Path]:
    """The label-studio executable and the template folder; raises when either is missing."""
    homes = sorted(Path("/opt/omnicurate").glob("labelstudio-*/venv"), key=lambda venv: venv.stat().st_mtime)
    home = homes[-1].parent if homes else Path("/opt/omnicurate/labelstudio")
    binary = Path(os.environ.get("LABEL_STUDIO_BIN") or home / "venv" / "bin" / "label-studio")
    template = Path(os.environ.get("LABEL_STUDIO_TEMPLATE") or home / "template")
    if not binary.is_file():
        raise ServerUnavailable(f"no label-studio executable at {binary} (LABEL_STUDIO_BIN)")
    if not (template / "omnicurate-users.json").is_file():
        raise ServerUnavailable(f"no template data folder at {template} (LABEL_STUDIO_TEMPLATE)")
    return binary, template


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_server(root: Path, timeout_s: float = 180) -> Iterator[LsServer]:
    """A server on 127.0.0.1 and a free port, its data a copy of the template under ``root``; stopped on exit."""
    binary, template = installed()
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
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise ServerUnavailable(f"Label Studio exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise ServerUnavailable(
                    f"Label Studio did not answer on {url} in {timeout_s:.0f} s:\n{log.read_text()[-3000:]}"
                )
            time.sleep(0.5)
        users = json.loads((template / "omnicurate-users.json").read_text())["users"]
        yield LsServer(url, document_root, users, log)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
