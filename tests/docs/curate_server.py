"""The ``curate`` the manual's examples run: a real process per command, forked from a server that has already
imported the libraries ``curate`` loads.

Started as a process of its own and warmed up, each ``curate`` an example runs is a short client (``curate`` on
the example's PATH) that hands the server its arguments, folder, environment and standard input, output and
error; the server forks, the child takes them on and runs ``omnicurate.cli.main.run`` as the installed script
does, and the client exits with the child's status. Only third-party libraries are imported beforehand
(SQLAlchemy, SQLModel, Pydantic, Typer, rich, Alembic, NumPy, SciPy, Pillow...); the project's own modules are
imported by each command, as in the installed script, so its lazy imports and what they register are unchanged.
On the project's 2-core machine a command cost 0.45-0.6 CPU-s as an interpreter of its own, 0.1-0.2 forked here.
Every command shares the server's hash seed. ``OMNICURATE_DOCS_REAL_CURATE=1`` runs the venv's ``curate``
instead (the ``curate_server`` fixture, tests/conftest.py). Tests that start several commands at once fork
them here too (the ``curate_process`` fixture).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

SOCKET_VARIABLE = "OMNICURATE_DOCS_CURATE_SERVER"
"""Where the client finds the server; the command's own environment does not hold it."""
SCRIPT = Path(sys.executable).parent / "curate"
"""The installed ``curate`` script, whose place the forked command takes (its ``sys.argv[0]``)."""
PRELOADED = (
    "sqlalchemy",
    "sqlalchemy.orm",
    "sqlalchemy.dialects.sqlite",
    "sqlmodel",
    "pydantic",
    "typer",
    "typer.main",
    "rich.console",
    "rich.table",
    "rich.progress",
    "orjson",
    "tomli_w",
    "alembic.command",
    "alembic.config",
    "alembic.runtime.migration",
    "alembic.script",
    "alembic.operations",
    "numpy",
    "scipy.stats",
    "scipy.signal",
    "scipy.sparse.csgraph",
    "PIL.Image",
    "soundfile",
    "pyloudnorm",
    "soxr",
)
"""Third-party modules that read nothing of the environment or folder when imported (those of an optional
extra that is not installed are left out)."""
ORPHAN_CHECK_S = 5
"""How often an idle server checks that the test process that started it is still there."""
CLIENT = """#!{python} -IS
import json, os, signal, socket, sys

sock = socket.socket(socket.AF_UNIX)
sock.connect(os.environ[{variable!r}])
socket.send_fds(sock, [b"r"], [0, 1, 2])
sock.sendall(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode())
sock.shutdown(socket.SHUT_WR)
reply = b""
while chunk := sock.recv(64):
    reply += chunk
if not reply:
    sys.exit("curate: the docs' curate server ended the command without its status (see its log)")
status = int(reply)
if status < 0:
    signal.signal(-status, signal.SIG_DFL)
    os.kill(os.getpid(), -status)
sys.exit(status)
"""


@dataclass
class CurateServer:
    """A running server: its socket, and the folder holding the ``curate`` client to put first on the PATH."""

    socket: Path
    bin: Path
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def start(folder: Path, env: dict[str, str]) -> CurateServer:
    """Start a server in FOLDER with ENV (the examples' environment) and wait until it accepts commands."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sock"
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    client = bin_dir / "curate"
    client.write_text(CLIENT.format(python=sys.executable, variable=SOCKET_VARIABLE), encoding="utf-8")
    client.chmod(0o755)
    with open(folder / "server.log", "wb") as log:
        process = subprocess.Popen(
            [sys.executable, __file__, str(path)], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )
    deadline = time.monotonic() + 120
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            log_text = (folder / "server.log").read_text(encoding="utf-8", errors="replace")
            raise RuntimeError(f"the docs' curate server did not start:\n{log_text}")
        time.sleep(0.05)
    return CurateServer(path, bin_dir, process)


def serve(path: str) -> None:
    """Import the libraries, then fork a command for each connection until terminated (or orphaned)."""
    sys.path[0] = str(SCRIPT.parent)  # where the installed script's process has its own folder
    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    gc.freeze()  # the commands' collections leave the libraries' objects alone (and their pages shared)
    signal.signal(signal.SIGCHLD, _reap)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)  # the socket appears only once it accepts
    listener.settimeout(ORPHAN_CHECK_S)
    parent = os.getppid()
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            if os.getppid() != parent:  # the tests' process is gone without stopping this server
                return
            continue
        if os.fork() == 0:
            listener.close()
            _command(conn)
        conn.close()


def _run() -> NoReturn:
    """Run the command as the installed script does (``sys.exit(run())``), imported here, in the command's own
    process; an error propagates to the interpreter (its traceback, exit 1) as there.

    A command that ends with an exit code and leaves no thread running ends as ``curate status`` ends itself
    (``omnicurate.cli.main._without_teardown``): output flushed, exit functions run, no teardown of every
    module, which in a process holding the server's libraries cost 0.3 CPU-s a command."""
    from omnicurate.cli.main import run

    try:
        code = run()
    except SystemExit as stop:
        code = stop.code
    if not (code is None or isinstance(code, int)) or threading.active_count() > 1:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code or 0)


def _reap(_signal: int, _frame: object) -> None:
    """Wait for the commands that ended, so that their CPU time counts in this server's (and in the tests' run:
    ``/usr/bin/time`` around pytest sees it) instead of vanishing with an ignored SIGCHLD."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _command(conn: socket.socket) -> None:
    """One command: receive it, run it in a child of this process, send its exit status back."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _, fds, _, _ = socket.recv_fds(conn, 1, 3)
    data = b""
    while chunk := conn.recv(1 << 16):
        data += chunk
    request = json.loads(data)
    child = os.fork()
    if child == 0:
        conn.close()
        for number, fd in enumerate(fds):
            os.dup2(fd, number)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update({k: v for k, v in request["env"].items() if k != SOCKET_VARIABLE})
        sys.argv = [str(SCRIPT), *request["argv"]]
        _run()
    for fd in fds:
        os.close(fd)
    _, status = os.waitpid(child, 0)
    conn.sendall(str(os.waitstatus_to_exitcode(status)).encode())
    conn.close()
    os._exit(0)


if __name__ == "__main__":
    serve(sys.argv[1])
