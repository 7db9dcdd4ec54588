"""The openai backend's request shape and its constraint check, against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from probe_fixtures import make_item
from scripted_http import JsonHandler, serving

from checker.backends import open_backend
from checker.backends.base import BackendError
from checker.estimators import EstimatorConfig
from checker.prompts import build_request


class ScriptedServer(ThreadingHTTPServer):
    reply: dict
    bodies: list[dict]


class Handler(JsonHandler):
    server: ScriptedServer

    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        self.send_json(self.server.reply)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    httpd = ScriptedServer(("127.0.0.1", 0), Handler)
    httpd.bodies = []
    with serving(httpd):
        yield httpd


def backend_for(server: ScriptedServer, flags: str = ""):  # type: ignore[no-untyped-def]
    return open_backend(f"openai:http://127.0.0.1:{server.server_address[1]}/v1#m{flags}")


def logprob_reply(tokens: dict[str, float]) -> dict:
    top = [{"token": t, "logprob": lp} for t, lp in tokens.items()]
    return {
        "choices": [
            {"message": {"content": top[0]["token"]}, "logprobs": {"content": [{**top[0], "top_logprobs": top}]}}
        ],
        "usage": {"completion_tokens": 1},
    }


def test_request_carries_media_parts_and_the_choice_constraint(server: ScriptedServer, media_dir: Path) -> None:
    server.reply = logprob_reply({"A": -0.1, "B": -2.0, "C": -3.0, "D": -4.0})
    out = backend_for(server).probe(
        [build_request(make_item(media_dir), "text+image+audio")], EstimatorConfig(name="logprob")
    )
    body = server.bodies[0]
    assert body["structured_outputs"] == {"choice": ["A", "B", "C", "D"]} and body["max_tokens"] == 1
    assert body["logprobs"] is True and body["top_logprobs"] == 4
    parts = body["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "input_audio", "text"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert parts[3]["input_audio"]["format"] == "wav"
    assert out[0].logprobs == {"A": -0.1, "B": -2.0, "C": -3.0, "D": -4.0}


def test_a_server_that_ignores_the_constraint_is_refused(server: ScriptedServer, media_dir: Path) -> None:
    server.reply = logprob_reply({"The": -0.1, "A": -2.0})
    with pytest.raises(BackendError, match="did not honour the choice constraint"):
        backend_for(server).probe([build_request(make_item(media_dir), "text")], EstimatorConfig(name="logprob"))
    server.reply = {"choices": [{"message": {"content": "I think A"}}] * 5, "usage": {"completion_tokens": 15}}
    with pytest.raises(BackendError, match="answer 'I think A'"):
        backend_for(server).probe([build_request(make_item(media_dir), "text")], EstimatorConfig())


def test_json_format_samples_unconstrained_and_parses_strictly(server: ScriptedServer, media_dir: Path) -> None:
    answers = ['{"answer": "option_B", "reasoning": "tone"}', "not sure", '{"answer": "option_B"}', "B", "E"]
    server.reply = {"choices": [{"message": {"content": a}} for a in answers], "usage": {"completion_tokens": 40}}
    item = make_item(media_dir)
    from checker.run import estimate

    out = backend_for(server, "#no-audio").probe(
        [build_request(item, "text+audio", audio_input=False, fmt="json")], EstimatorConfig()
    )
    body = server.bodies[0]
    assert "structured_outputs" not in body and body["n"] == 5 and body["temperature"] == 0.7
    assert all(p["type"] == "text" for p in body["messages"][1]["content"])
    view = estimate(out[0], ("A", "B", "C", "D"), EstimatorConfig())
    assert view.counts == {"A": 0, "B": 3, "C": 0, "D": 0} and view.unparseable == 2
    assert out[0].generated_tokens == 40 and out[0].audio_route == "description"


def test_bad_specs_are_refused() -> None:
    for spec in ("openai:127.0.0.1#m", "openai:http://x/v1", "openai:http://x/v1#m#loud"):
        with pytest.raises(BackendError):
            open_backend(spec)
