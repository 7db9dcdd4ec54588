"""The ``openai:`` generation backend of `curate judge respond` and `curate judge run` against a real HTTP server
on 127.0.0.1 implementing chat completions (two URLs sharing the calls): the request shape (system prompt, media
as data URLs, temperature, seed), the judge's temperature 0.7 and one seed per sample, both pair orders, and a
rerun that sends nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from scripted_http import JsonHandler, serving
from typer.testing import CliRunner

from omnicurate.cli.main import app
from tests.conftest import DemoTemplates

runner = CliRunner()


class ChatServer(ThreadingHTTPServer):
    requests: list[dict]


class Handler(JsonHandler):
    server: ChatServer

    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        user = body["messages"][-1]["content"][-1]["text"]
        if "Answer with one JSON object" in user:  # a judge: always prefers the response shown first
            content = json.dumps({"overall": {"comment": "The first is better.", "choice": 0}})
        else:
            content = "A reply from the server."
        self.send_json({"choices": [{"message": {"role": "assistant", "content": content}}]})


@pytest.fixture
def servers() -> Iterator[list[ChatServer]]:
    started = []
    for _ in range(2):
        server = ChatServer(("127.0.0.1", 0), Handler)
        server.requests = []
        started.append(server)
    with serving(*started):
        yield started


@pytest.fixture
def demo(tmp_path: Path, demo_templates: DemoTemplates) -> Iterator[Path]:
    """A copy of the judge demo of this test's own (it writes to it)."""
    ws = demo_templates.copy("judge", tmp_path / "ws")
    yield ws.root
    demo_templates.discard(ws)


def test_respond_and_run_through_an_openai_compatible_server(demo: Path, servers: list[ChatServer]) -> None:
    urls = ",".join(f"http://127.0.0.1:{s.server_address[1]}/v1" for s in servers)
    ws = ["-w", str(demo)]
    args = [*ws, "judge", "respond", "--system", "sys-o", "--backend", f"openai:{urls}#tiny", "--accepts", "text,image"]
    done = runner.invoke(app, [*args, "--seed", "3", "--json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert len(json.loads(done.stdout)["answered"]) == 4
    sent = [r for s in servers for r in s.requests]
    assert len(sent) == 4 and all(s.requests for s in servers), "the calls are shared between the URLs"
    assert {(r["model"], r["temperature"], r["seed"]) for r in sent} == {("tiny", 0.0, 3)}
    with_image = [r for r in sent if len(r["messages"][-1]["content"]) == 2]
    assert len(with_image) == 2 and with_image[0]["messages"][-1]["content"][0]["image_url"]["url"].startswith(
        "data:image/"
    )

    for s in servers:
        s.requests.clear()
    judge = [*ws, "judge", "run", "--judge", "tiny", "--backend", f"openai:{urls}#tiny", "--setting", "overall"]
    done = runner.invoke(app, [*judge, "--kind", "pair", "--json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["invalid"] == 0
    sent = [r for s in servers for r in s.requests]
    assert len(sent) == 22 * 2 * 3, "22 pairs, both orders, three samples"
    assert {r["temperature"] for r in sent} == {0.7} and {r["seed"] for r in sent} == {0, 1, 2}
    report = json.loads(runner.invoke(app, [*ws, "judge", "report", "--json", "--bootstrap", "0"]).stdout)
    assert report["consistency"]["tiny/overall"]["position"]["value"] == 0.0, "a judge that always picks the first"
    for s in servers:
        s.requests.clear()
    again = runner.invoke(app, [*judge, "--kind", "pair", "--json"], catch_exceptions=False)
    assert json.loads(again.stdout)["cached"] == 22 and not any(s.requests for s in servers), "nothing sent again"
