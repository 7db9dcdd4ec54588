"""End to end through one scripted OpenAI-compatible server on 127.0.0.1: ``curate transcribe --backend openai:``
posts each clip to ``/audio/transcriptions``; ``curate check`` with a probe that cannot hear then reads that
transcript in every view that shows the audio, and records the route and the transcript's model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from email.parser import BytesParser
from email.policy import HTTP
from http.server import ThreadingHTTPServer

import pytest
from scripted_http import JsonHandler, serving
from typer.testing import CliRunner

from curation.tables import Asset
from curation.workspace import Workspace
from omnicurate.cli.main import app

ITEM = "kitchen-01-a"
SAID = "sure that was really helpful (whisper)"
"""Unlike the item's context, so that only a view showing the audio carries it."""


class Scripted(ThreadingHTTPServer):
    uploads: list[dict]
    chats: list[dict]


class Handler(JsonHandler):
    server: Scripted

    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path.endswith("/audio/transcriptions"):
            message = BytesParser(policy=HTTP).parsebytes(
                f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + raw
            )
            parts = {
                p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
                for p in message.iter_parts()
            }
            self.server.uploads.append(parts)
            reply = {"text": f" {SAID} "}
        else:
            self.server.chats.append(json.loads(raw))
            top = [{"token": k, "logprob": lp} for k, lp in (("A", -0.05), ("B", -3.0), ("C", -4.0), ("D", -5.0))]
            reply = {
                "choices": [{"message": {"content": "A"}, "logprobs": {"content": [{**top[0], "top_logprobs": top}]}}],
                "usage": {"completion_tokens": 1},
            }
        self.send_json(reply)


@pytest.fixture
def server() -> Iterator[Scripted]:
    httpd = Scripted(("127.0.0.1", 0), Handler)
    httpd.uploads, httpd.chats = [], []
    with serving(httpd):
        yield httpd


def test_the_deaf_probe_reads_the_served_transcript_and_the_run_names_its_model(
    demo_workspace: Workspace, server: Scripted
) -> None:
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    root = str(demo_workspace.root)
    done = CliRunner().invoke(
        app, ["-w", root, "transcribe", "--backend", f"openai:{base}#whisper-large-v3", "--item", ITEM, "--json"]
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["model"] == "openai:whisper-large-v3"
    (upload,) = server.uploads
    with demo_workspace.session() as s:
        clip = demo_workspace.asset_path(s.get(Asset, demo_workspace.item(ITEM).audio))  # the item's clip, as stored
    assert upload["model"] == b"whisper-large-v3" and upload["language"] == b"en"
    assert upload["file"] == clip.read_bytes()

    checked = CliRunner().invoke(
        app,
        [
            "-w",
            root,
            "check",
            "--probe",
            f"openai:{base}#m#no-audio",
            "--estimator",
            "logprob",
            "--item",
            ITEM,
            "--json",
        ],
    )
    assert checked.exit_code == 0, checked.output
    document = json.loads(checked.stdout)
    assert document["run"]["transcripts"] == {ITEM: "openai:whisper-large-v3"}
    views = document["items"][0]["views"]
    assert {v: views[v]["audio_route"] for v in ("audio", "text+image+audio", "text")} == {
        "audio": "transcript",
        "text+image+audio": "transcript",
        "text": "hidden",
    }
    prompts = [json.dumps(chat["messages"]) for chat in server.chats]
    assert sum(SAID in p for p in prompts) == 4  # the four views that show the audio, and only those
    assert not any("input_audio" in p for p in prompts)
