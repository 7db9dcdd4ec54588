"""`curate ls up` / `curate ls down`: a real Label Studio started on 127.0.0.1 with a token the bridge accepts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from annotation_ui.labelstudio import local_server
from curation.errors import CurateError
from tests.annotation_ui.labelstudio.server import ServerUnavailable, installed
from tests.conftest import missing_service

ROOT = Path(__file__).resolve().parents[3]


def curate(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "omnicurate", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.service
@pytest.mark.slow
def test_ls_up_starts_a_server_the_bridge_signs_in_to_and_ls_down_stops_it(tmp_path: Path) -> None:
    try:
        binary, _template = installed()
    except ServerUnavailable as exc:
        missing_service(f"{exc}; run `bash .ci/setup.d/40-labelstudio.sh`")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home = tmp_path / "ls"
    up = curate("ls", "up", "--home", str(home), "--port", str(port), "--label-studio", str(binary), "--json")
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        started = json.loads(up.stdout)
        env = started["env"]
        assert env["LABEL_STUDIO_URL"] == f"http://127.0.0.1:{port}"
        assert env["LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT"] == str(home / "files")
        assert oct((home / "account.json").stat().st_mode & 0o777) == "0o600"
        with urllib.request.urlopen(f"{env['LABEL_STUDIO_URL']}/health", timeout=5) as answer:
            assert answer.status == 200
        assert curate("init", str(tmp_path / "ws")).returncode == 0
        status = curate("-w", str(tmp_path / "ws"), "ls", "status", "--json", env=env)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["user"]["email"] == "maintainer@localhost"
        again = curate("ls", "up", "--home", str(home), "--port", str(port), "--label-studio", str(binary))
        assert again.returncode == 0 and f"export LABEL_STUDIO_API_KEY={env['LABEL_STUDIO_API_KEY']}" in again.stdout
    finally:
        down = curate("ls", "down", "--home", str(home))
    assert down.returncode == 0 and f"stopped Label Studio at http://127.0.0.1:{port}" in down.stdout
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5)
    assert "no local Label Studio runs" in curate("ls", "down", "--home", str(home)).stdout


FAKE_INIT = """import argparse, json, sys
parser = argparse.ArgumentParser(prog="label-studio")
sub = parser.add_subparsers(dest="command")
init = sub.add_parser("init")
init.add_argument("project_name")
init.add_argument("--username")
init.add_argument("--password")
init.add_argument("--user-token")
init.add_argument("--enable-legacy-api-token", action="store_true")
args = parser.parse_args()
json.dump(vars(args), open(sys.argv[0] + ".args", "w"))
"""


@pytest.mark.parametrize("password", ["-starts-with-a-dash", "--looks-like-an-option", "plain_Pass-1"])
def test_the_account_survives_a_password_that_starts_with_a_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, password: str
) -> None:
    """token_urlsafe starts with "-" one time in 64; label-studio's argparse must still read it as the value."""
    binary = tmp_path / "label-studio"
    binary.write_text(f"#!{sys.executable}\n{FAKE_INIT}", encoding="utf-8")
    binary.chmod(0o755)
    monkeypatch.setattr(local_server.secrets, "token_urlsafe", lambda _n: password)
    account = tmp_path / "account.json"
    local_server.create_account(binary, {"PATH": "/usr/bin:/bin"}, account, "maintainer@localhost")
    given = json.loads(Path(f"{binary}.args").read_text(encoding="utf-8"))
    kept = json.loads(account.read_text(encoding="utf-8"))
    assert given["password"] == kept["password"] == password
    assert given["username"] == kept["email"] == "maintainer@localhost"
    assert given["user_token"] == kept["token"] and len(kept["token"]) == 40
    assert given["enable_legacy_api_token"] is True
    assert oct(account.stat().st_mode & 0o777) == "0o600"


def test_a_failed_init_says_why_and_keeps_no_account(tmp_path: Path) -> None:
    binary = tmp_path / "label-studio"
    binary.write_text("#!/bin/sh\necho 'migrations failed: disk full' >&2\nexit 3\n", encoding="utf-8")
    binary.chmod(0o755)
    account = tmp_path / "account.json"
    with pytest.raises(CurateError, match="label-studio init failed:\n.*disk full"):
        local_server.create_account(binary, {"PATH": "/usr/bin:/bin"}, account, "maintainer@localhost")
    assert not account.exists()
