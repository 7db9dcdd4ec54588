"""`[screen] prompts`: a workspace's replacement prompt is what `curate screen` asks with (its hash in every
proposal's provenance), a changed prompt asks again, and a bad prompt folder stops the screen before any step."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import tomli_w
from typer.testing import CliRunner

from curation.screening.model import score_request
from curation.screening.pipeline import selected_candidates
from curation.screening.prompt_templates import load_prompts
from curation.screening.transitions import transition_records
from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.story_corpus import build_corpus

runner = CliRunner()


def configure(root: Path, screen: dict) -> None:  # type: ignore[type-arg]
    path = root / "curate.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))  # keeps [database] (the test's PostgreSQL)
    data["screen"] = screen
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


def steps(result) -> dict[str, int]:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output
    return {s["step"]: s["computed"] for s in json.loads(result.stdout)["steps"]}


def test_a_replaced_prompt_is_asked_recorded_and_a_change_asks_again(workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus = build_corpus(tmp_path / "corpus", books=6)
    prompts = workspace.root / "my-prompts"
    prompts.mkdir()
    (prompts / "score.user.txt").write_text("Page one: {current_text}\nPage two: {next_text}\n", encoding="utf-8")
    configure(workspace.root, {"top": 4, "prompts": "my-prompts", "model": {"backend": f"replay:{corpus.replay}"}})
    w = ["-w", str(workspace.root)]
    assert runner.invoke(app, [*w, "import", "candidates", str(corpus.candidates)]).exit_code == 0
    first = steps(runner.invoke(app, [*w, "screen", "--json"]))
    assert first["score"] > 0 and first["annotate"] > 0
    ws = Workspace.open(workspace.root)
    mine = load_prompts(workspace.root, "my-prompts")
    for record in transition_records(ws, selected_candidates(ws, ws.settings.screen)):
        current, nxt = record["current"]["text"], record["next"]["text"]
        asked = score_request(record["id"], ("a.png", current), ("b.png", nxt), mine)
        assert asked.user == f"Page one: {current}\nPage two: {nxt}"
        assert record["score_provenance"]["prompt_hash"] == asked.prompt_hash, "the replaced prompt was asked"
        packaged = score_request(record["id"], ("a.png", current), ("b.png", nxt))
        assert record["score_provenance"]["prompt_hash"] != packaged.prompt_hash
    ws.close()

    assert steps(runner.invoke(app, [*w, "screen", "--json"])) == dict.fromkeys(first, 0) | {"select": 0}
    (prompts / "score.user.txt").write_text("Before: {current_text}\nAfter: {next_text}\n", encoding="utf-8")
    again = steps(runner.invoke(app, [*w, "screen", "--json"]))
    assert again["score"] == first["score"] and again["annotate"] == 0, "only the changed prompt's step asks again"

    (prompts / "notes.txt").write_text("?", encoding="utf-8")
    refused = runner.invoke(app, [*w, "screen"])
    assert refused.exit_code == 2 and "notes.txt: not a screening prompt" in refused.output
