"""One real Label Studio server per test session (see ``server.py``).

In CI (CI=true) a server that is not installed, or does not start, fails these tests; elsewhere they are
skipped with the command that sets it up.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from curation.workspace import Workspace
from tests.annotation_ui.labelstudio.server import LsServer, ServerUnavailable, installed, running_server

IN_CI = os.environ.get("CI") == "true"


@pytest.fixture(scope="session")
def ls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LsServer]:
    try:
        installed()
    except ServerUnavailable as exc:
        if IN_CI:
            pytest.fail(f"CI=true but {exc}: .ci/setup.d/40-labelstudio.sh must install the Label Studio server")
        pytest.skip(f"{exc}; run `bash .ci/setup.d/40-labelstudio.sh` to set up a Label Studio server")
    try:
        with running_server(tmp_path_factory.mktemp("labelstudio")) as server:
            yield server
    except ServerUnavailable as exc:
        pytest.fail(str(exc))


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
