"""The ``openai:`` checklist drafter against a real HTTP server on 127.0.0.1 that implements the
chat-completions endpoint: the request shape (JSON schema, media parts, captions first for audio and
video, the API key), the drafts it stores, the cache, what a broken answer or server gives, and the captions
it shares with the caption route (one per medium and model).
(The same drafter against vLLM's server: tests/checker/test_checker_vllm_backends.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from scripted_http import JsonHandler, serving

from checker.backends.base import BackendError
from checker.captions import open_captioner
from checker.drafting import draft_checklists, open_drafter
from curation.errors import ValidationFailed
from curation.kinds.judge import draft_store, task_store
from curation.kinds.judge.captioning import caption, stored_caption
from curation.kinds.judge.drafting import DRAFT_SCHEMA
from curation.kinds.judge.rubrics import RUBRICS
from curation.tables import Asset
from curation.workspace import Workspace
from omnicurate.demo.judge_sources import write_sources

CHECKLIST = {r: [f"Is the {r} of the answer right?"] for r in RUBRICS}


class ChatServer(ThreadingHTTPServer):
    requests: list[tuple[dict, dict[str, str]]]
    draft_reply: str
    status: int
    finish_reason: str


class Handler(JsonHandler):
    server: ChatServer

    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((body, dict(self.headers)))
        if self.path != "/v1/chat/completions" or self.server.status != 200:
            self.send_response(self.server.status if self.server.status != 200 else 404)
            self.end_headers()
            return
        parts = body["messages"][-1]["content"]
        if "response_format" in body:
            content = self.server.draft_reply
        else:  # a caption request: name the medium it was shown
            content = f"A caption of the {parts[0]['type']} input."
        choice = {"message": {"role": "assistant", "content": content}, "finish_reason": self.server.finish_reason}
        self.send_json({"choices": [choice]})


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    httpd = ChatServer(("127.0.0.1", 0), Handler)
    httpd.requests, httpd.status, httpd.finish_reason = [], 200, "stop"
    httpd.draft_reply = json.dumps({"checklist": CHECKLIST})
    with serving(httpd):
        yield httpd


@pytest.fixture
def judge_ws(tmp_path: Path) -> Iterator[Workspace]:
    sources = write_sources(tmp_path / "src")
    keep = ("t2t-01", "i2t-01", "v2t-01")
    for name in ("tasks", "responses"):
        lines = [x for x in sources[name].read_text().splitlines() if any(f'"{t}"' in x for t in keep)]
        sources[name].write_text("\n".join(lines) + "\n")
    ws = Workspace.init(tmp_path / "ws")
    task_store.import_tasks(ws, sources["tasks"])
    yield ws
    ws.close()


def spec(server: ChatServer) -> str:
    return f"openai:http://127.0.0.1:{server.server_address[1]}/v1#judge-model"


def test_drafts_by_json_schema_with_video_captioned_first(
    chat_server: ChatServer, judge_ws: Workspace, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    drafter = open_drafter(spec(chat_server))
    run = draft_checklists(judge_ws, drafter)
    assert sorted(run.drafted) == ["i2t-01", "t2t-01", "v2t-01"]
    drafts = [body for body, _ in chat_server.requests if "response_format" in body]
    captions = [body for body, _ in chat_server.requests if "response_format" not in body]
    assert len(drafts) == 3 and len(captions) == 1, "only the video is captioned"
    assert captions[0]["messages"][0]["content"][0]["type"] == "video_url"
    assert captions[0]["messages"][0]["content"][0]["video_url"]["url"].startswith("data:video/mp4;base64,")
    for body in drafts:
        assert body["model"] == "judge-model" and body["temperature"] == 0.0
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "checklist", "schema": DRAFT_SCHEMA},
        }
        assert "structured_outputs" not in body, "a plain OpenAI server refuses vLLM's own parameters"
    by_task = {d["messages"][-1]["content"][-1]["text"].splitlines()[0]: d for d in drafts}
    video_prompt = next(d for t, d in by_task.items() if "bright bar" in t)
    assert (
        "Caption of the input video: A caption of the video_url input."
        in video_prompt["messages"][-1]["content"][-1]["text"]
    )
    image_prompt = next(d for t, d in by_task.items() if "colour" in t)
    assert image_prompt["messages"][-1]["content"][0]["type"] == "image_url", "images are shown, not captioned"
    assert all(h.get("Authorization") == "Bearer sk-test" for _, h in chat_server.requests)

    entries = draft_store.drafted_candidates(judge_ws, "t2t-01")
    assert sorted((e.rubric, e.text) for e in entries) == sorted((r, t[0]) for r, t in CHECKLIST.items())
    assert {e.provenance.model for e in entries} == {drafter.model_id}  # type: ignore[union-attr]
    sent = len(chat_server.requests)
    assert draft_checklists(judge_ws, drafter).cached == ["i2t-01", "t2t-01", "v2t-01"]
    assert len(chat_server.requests) == sent, "cached drafts ask the server nothing"


def test_a_broken_answer_or_server_is_named_and_stores_nothing(chat_server: ChatServer, judge_ws: Workspace) -> None:
    drafter = open_drafter(spec(chat_server))
    chat_server.draft_reply = '{"checklist": {"relevance": ["Is it on topic?"]'
    with pytest.raises(ValidationFailed, match="draft of t2t-01: not JSON"):
        draft_checklists(judge_ws, drafter, ["t2t-01"])
    chat_server.draft_reply = json.dumps({"checklist": {"relevance": ["x" * 201]}})
    with pytest.raises(ValidationFailed, match="a question for relevance is longer than 200 characters"):
        draft_checklists(judge_ws, drafter, ["t2t-01"])
    chat_server.status = 500
    with pytest.raises(BackendError, match="the chat request failed"):
        draft_checklists(judge_ws, drafter, ["t2t-01"])
    assert draft_store.drafted_candidates(judge_ws, "t2t-01") == []


def test_the_vllm_flag_adds_compact_structured_outputs_and_a_cut_answer_is_named(
    chat_server: ChatServer, judge_ws: Workspace
) -> None:
    drafter = open_drafter(spec(chat_server) + "#vllm")
    assert drafter.model_id == open_drafter(spec(chat_server)).model_id, "the flag changes the request, not the model"
    draft_checklists(judge_ws, drafter, ["t2t-01"])
    body = chat_server.requests[-1][0]
    assert body["structured_outputs"] == {"json": DRAFT_SCHEMA, "disable_any_whitespace": True}
    chat_server.finish_reason = "length"
    with pytest.raises(BackendError, match="cut off at the model's length limit"):
        draft_checklists(judge_ws, drafter, ["i2t-01"])
    with pytest.raises(BackendError, match="the only one is #vllm"):
        open_drafter(spec(chat_server) + "#loud")
    chat_server.finish_reason = "stop"
    chat_server.draft_reply = json.dumps({"checklist": {"clarity": ["Is it clear? " * 20]}})
    with pytest.raises(ValidationFailed, match="longer than 200 characters"):
        draft_checklists(judge_ws, drafter, ["i2t-01"])


def test_drafting_and_the_caption_route_share_one_caption_per_medium_and_model(
    chat_server: ChatServer, judge_ws: Workspace
) -> None:
    """A judge run's caption (the caption route's ``openai:`` backend) serves the drafter of the same model, and a
    second draft, at another address of that model, asks no caption either."""
    video = task_store.task(judge_ws, "v2t-01").inputs["video"]
    with judge_ws.session() as s:
        stored_file = judge_ws.asset_path(s.get(Asset, video))
    captioner = open_captioner(judge_ws, spec(chat_server), lambda _: stored_file)
    assert captioner is not None
    text = caption(judge_ws, captioner, "video", video)
    assert text == "A caption of the video_url input." and len(chat_server.requests) == 1

    drafter = open_drafter(spec(chat_server))
    assert drafter.caption_model == captioner.model == "openai#judge-model"
    draft_checklists(judge_ws, drafter, ["v2t-01"])
    asked = [body for body, _ in chat_server.requests[1:]]
    assert [("response_format" in b) for b in asked] == [True], "the drafter asks no caption: the route's is stored"
    assert f"Caption of the input video: {text}" in asked[0]["messages"][-1]["content"][-1]["text"]

    elsewhere = open_drafter(f"openai:http://localhost:{chat_server.server_address[1]}/v1#judge-model")
    assert elsewhere.model_id != drafter.model_id, "another address: the draft cache misses"
    assert draft_checklists(judge_ws, elsewhere, ["v2t-01"]).drafted == ["v2t-01"]
    assert all("response_format" in b for b, _ in chat_server.requests[1:]), "still no caption asked"
    assert stored_caption(judge_ws, "openai#judge-model", "video", video) == text
