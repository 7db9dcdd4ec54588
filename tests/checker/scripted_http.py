"""A scripted local JSON server the checker tests share, so each test file keeps only its state and replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JsonHandler(BaseHTTPRequestHandler):
    """A handler base whose replies are JSON and whose requests leave the test output quiet."""

    def send_json(self, reply: object, status: int = 200) -> None:
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
        """Say nothing: a request log would only bury the test's own output."""


@contextmanager
def serving(*servers: ThreadingHTTPServer) -> Iterator[None]:
    """Serve each server on a daemon thread for the block, then stop it and free its port. The thread looks for
    the stop every 20 ms (``serve_forever``'s default, 0.5 s, was half a second of every such test)."""
    for server in servers:
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
