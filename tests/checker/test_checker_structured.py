"""Structured generation for screening: the openai fan-out over several servers, and backend specs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from scripted_http import JsonHandler, serving

from checker.backends.base import BackendError
from checker.structured import TransformersStructured, decoding_schema, open_structured_model
from curation.screening.model import TASK_MODELS, score_request, speech_request, task_schema
from curation.screening.schema import CRITERIA, Scores
from omnicurate.demo.story_corpus import draw_page


class CountingServer(ThreadingHTTPServer):
    bodies: list[dict]
    in_flight: list[int]
    peak: list[int]
    lock: threading.Lock


class Handler(JsonHandler):
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
        self.send_json({"choices": [{"message": {"content": content}}]})


@pytest.fixture
def servers() -> Iterator[list[CountingServer]]:
    shared = ([0], [0], threading.Lock())  # in flight over both servers together
    started = []
    for _ in range(2):
        httpd = CountingServer(("127.0.0.1", 0), Handler)
        httpd.bodies, (httpd.in_flight, httpd.peak, httpd.lock) = [], shared
        started.append(httpd)
    with serving(*started):
        yield started


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
    with pytest.raises(BackendError, match="is not a model folder"):
        open_structured_model("transformers:/models/x")
    with pytest.raises(BackendError, match="unknown model backend"):
        open_structured_model("gpt4")
    with pytest.raises(BackendError, match="openai:<url>"):
        open_structured_model("openai:http://127.0.0.1:1/v1")
    replay = tmp_path / "r.jsonl"
    replay.write_text(json.dumps({"subject": "a", "task": "score", "output": {"x": 1}}) + "\n", encoding="utf-8")
    model = open_structured_model("replay:r.jsonl", root=tmp_path, batch_size=3)
    assert model.batch_size == 3 and model.model_id.startswith("r.jsonl@")


def test_the_decoding_schema_bounds_every_free_string_and_list() -> None:
    schema = decoding_schema(task_schema("book_meta"), max_string=7, max_items=3)
    character = schema["$defs"]["Character"]["properties"]
    assert character["name"]["maxLength"] == 7 and character["personality"]["maxItems"] == 3
    assert character["personality"]["items"]["maxLength"] == 7
    assert "maxLength" not in character["sex"], "an enum is bounded already"
    assert schema["properties"]["characters"]["maxItems"] == 3
    assert "maxLength" not in task_schema("book_meta")["properties"]["genre"], "the task's own schema is untouched"
    scores = decoding_schema(task_schema("score"), max_string=5)
    assert scores["$defs"]["Criterion"]["properties"]["score"]["enum"] == list(range(1, 11))
    assert scores["$defs"]["Criterion"]["properties"]["rationale"] == {
        "minLength": 1,
        "maxLength": 5,
        "title": "Rationale",
        "type": "string",
    }


def test_transformers_structured_scores_through_the_tiny_omni_model(tiny_omni, hf_backend, media_dir) -> None:  # type: ignore[no-untyped-def]
    """Greedy decoding under the schema: a random model can only say what the schema allows (images included), two
    requests of different tasks in one left-padded batch."""
    model = TransformersStructured(
        str(tiny_omni), model=hf_backend.model, max_string=4, max_tokens=400, max_whitespace=0, micro_batch=2
    )
    requests = [
        score_request(
            "c1", (str(media_dir / "red.png"), "Once upon a time."), (str(media_dir / "blue.png"), "The end.")
        ),
        speech_request("c2", "A short story.", ['"Look!" said Bo.']),
    ]
    score, speech = model.generate(requests)
    assert score is not None and speech is not None, "schema-constrained answers parse"
    scores = Scores.model_validate(score)
    assert all(1 <= getattr(scores, c).score <= 10 and len(getattr(scores, c).rationale) <= 4 for c in CRITERIA)
    assert len(TASK_MODELS["speech"].model_validate(speech).utterance) <= 4
    assert model.generated_tokens > len(json.dumps(score, separators=(",", ":")))
    assert model.model_id.endswith(hf_backend.model_id.rsplit("@", 1)[1])


def test_structured_replay_keeps_a_line_separator_inside_a_recorded_answer(tmp_path) -> None:
    from checker.structured import ReplayStructured
    from curation.screening.model import TASKS

    task = TASKS[0]
    output = {"rationale": "first\u2028second"}
    path = tmp_path / "replay.jsonl"
    path.write_text(
        json.dumps({"subject": "c1", "task": task, "output": output}, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    assert ReplayStructured(str(path)).outputs == {("c1", task): output}  # one line, not two broken ones
