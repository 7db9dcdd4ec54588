"""Structured generation for screening: the openai fan-out over several servers, and backend specs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from checker.backends.base import BackendError
from checker.structured import open_structured_model
from curation.screening.model import score_request
from omnicurate.demo.story_corpus import draw_page


class CountingServer(ThreadingHTTPServer):
    bodies: list[dict]
    in_flight: list[int]
    peak: list[int]
    lock: threading.Lock


class Handler(BaseHTTPRequestHandler):
    server: CountingServer

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.bodies.append(body)
            self.server.in_flight[0] += 1
            self.server.peak[0] = max(self.server.peak[0], self.server.in_flight[0])
        time.sleep(0.05)
        with self.server.lock:
            self.server.in_flight[0] -= 1
        user = body["messages"][1]["content"][-1]["text"]
        content = json.dumps({"echo": user}) if "broken" not in user else "not json {"
        data = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
        pass


@pytest.fixture
def servers() -> Iterator[list[CountingServer]]:
    shared = ([0], [0], threading.Lock())  # in flight over both servers together
    started = []
    for _ in range(2):
        httpd = CountingServer(("127.0.0.1", 0), Handler)
        httpd.bodies, (httpd.in_flight, httpd.peak, httpd.lock) = [], shared
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
    yield started
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def test_openai_fans_out_over_servers_within_the_concurrency_in_request_order(servers, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    image = tmp_path / "p.jpg"
    draw_page(image, 1)
    urls = ",".join(f"http://127.0.0.1:{s.server_address[1]}/v1" for s in servers)
    model = open_structured_model(f"openai:{urls}#story-judge", concurrency=3)
    requests = [
        score_request(f"c{i}", (str(image), f"page {i}"), (str(image), "broken" if i == 5 else "next"))
        for i in range(12)
    ]
    answers = model.generate(requests)
    assert [a["echo"].split("\n")[2] if a else None for a in answers] == [
        None if i == 5 else f"page {i}" for i in range(12)
    ]
    assert len(servers[0].bodies) == len(servers[1].bodies) == 6
    assert servers[0].peak[0] == 3  # never more in flight than the concurrency, over both servers
    body = servers[0].bodies[0]
    assert body["model"] == "story-judge" and body["temperature"] == 0.0
    schema = body["response_format"]["json_schema"]
    assert body["response_format"]["type"] == "json_schema" and schema["name"] == "score"
    assert set(schema["schema"]["properties"]) == {
        "current_page_quality",
        "next_page_quality",
        "image_style_coherence",
        "transition_coherence",
    }
    parts = body["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "image_url", "text"]
    assert parts[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert model.model_id == "openai#story-judge"


def test_specs_are_checked(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="no structured"):
        open_structured_model("vllm:/models/x")
    with pytest.raises(BackendError, match="unknown model backend"):
        open_structured_model("gpt4")
    with pytest.raises(BackendError, match="openai:<url>"):
        open_structured_model("openai:http://127.0.0.1:1/v1")
    replay = tmp_path / "r.jsonl"
    replay.write_text(json.dumps({"subject": "a", "task": "score", "output": {"x": 1}}) + "\n", encoding="utf-8")
    model = open_structured_model("replay:r.jsonl", root=tmp_path, batch_size=3)
    assert model.batch_size == 3 and model.model_id.startswith("r.jsonl@")
