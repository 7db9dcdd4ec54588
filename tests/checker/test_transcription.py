"""``curate transcribe`` with a tiny random whisper built here, and the checker's transcript route reading it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checker.check import load_probe_items, transcript_sources
from checker.prompts import build_request
from curation.transcripts import all_transcripts
from curation.workspace import Workspace
from omnicurate.cli.main import app

ITEM = "kitchen-01-a"


@pytest.fixture(scope="module")
def tiny_whisper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from checker.random_whisper import build_random_whisper

    return build_random_whisper(tmp_path_factory.mktemp("whisper") / "tiny-whisper")


def _transcribe(ws: Workspace, spec: str) -> dict:
    result = CliRunner().invoke(app, ["-w", str(ws.root), "transcribe", "--backend", spec, "--item", ITEM, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_tiny_whisper_transcript_is_stored_and_read_by_the_transcript_view(
    demo_workspace: Workspace, tiny_whisper: Path
) -> None:
    first = _transcribe(demo_workspace, f"whisper:{tiny_whisper}")
    assert first["transcribed"] == 1 and first["model"].startswith("whisper:tiny-whisper@")
    text = first["transcripts"][0]["text"]
    assert text and first["transcripts"][0]["language"] == "en"
    stored = all_transcripts(demo_workspace)
    assert [(t.model, t.text) for t in stored] == [(first["model"], text)]

    again = _transcribe(demo_workspace, f"whisper:{tiny_whisper}")  # the same model skips the clip
    assert again["transcribed"] == 0 and again["already"] == 1

    (item,) = load_probe_items(demo_workspace, [ITEM])
    assert item.audio_transcript == text and item.audio_transcript_source == first["model"]
    deaf = build_request(item, "text+image+audio", audio_input=False)
    assert deaf.audio_route == "transcript" and text in deaf.prompt_text and deaf.audio is None
    hearing = build_request(item, "text+image+audio", audio_input=True)
    assert hearing.audio_route == "native" and text not in hearing.prompt_text
    assert transcript_sources([item]) == {ITEM: first["model"]}


def test_a_replay_transcript_of_a_second_model_becomes_the_one_the_checker_reads(
    demo_workspace: Workspace, tmp_path: Path
) -> None:
    (item,) = load_probe_items(demo_workspace, [ITEM])
    assert item.audio_transcript_source in (None, "author")
    replay = tmp_path / "transcripts.jsonl"
    replay.write_text(
        json.dumps({"audio": item.audio_sha, "text": " Sure, that was helpful. ", "model": "whisper-large-v3"}) + "\n"
    )
    done = _transcribe(demo_workspace, f"replay:{replay}")
    assert done["transcribed"] == 1 and done["model"] == "whisper-large-v3"
    (item,) = load_probe_items(demo_workspace, [ITEM])
    assert (item.audio_transcript, item.audio_transcript_source) == ("Sure, that was helpful.", "whisper-large-v3")


def test_a_malformed_replay_file_is_refused_naming_its_line(demo_workspace: Workspace, tmp_path: Path) -> None:
    replay = tmp_path / "bad.jsonl"
    replay.write_text('{"audio": "abc", "text": "x", "speaker": "y"}\n')
    result = CliRunner().invoke(app, ["-w", str(demo_workspace.root), "transcribe", "--backend", f"replay:{replay}"])
    assert result.exit_code == 2 and "bad.jsonl:1" in result.output
    assert all_transcripts(demo_workspace) == []
