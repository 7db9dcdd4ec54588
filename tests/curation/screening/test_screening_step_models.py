"""A model per step: `[screen.model.<step>]` names the backend of score, annotate (or book_meta, conditions,
speech one by one), falling back to `[screen.model]`; each proposal keeps the model that wrote it."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import tomli_w
from typer.testing import CliRunner

from checker.structured import ReplayStructured
from curation.screening.pipeline import selected_candidates
from curation.screening.settings import ModelSettings, ScreenSettings
from curation.screening.transitions import transition_records
from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.story_corpus import build_corpus

runner = CliRunner()


def split_replay(replay: Path, folder: Path) -> dict[str, Path]:
    """The corpus's recorded outputs as one replay file per task, as three different models would give them."""
    lines: dict[str, list[str]] = {}
    for line in replay.read_text(encoding="utf-8").splitlines():
        lines.setdefault(json.loads(line)["task"], []).append(line)
    files = {}
    for task, found in lines.items():
        files[task] = folder / f"{task}.jsonl"
        files[task].write_text("\n".join(found) + "\n", encoding="utf-8")
    return files


def configure(ws: Workspace, model: dict) -> None:  # type: ignore[type-arg]
    path = ws.root / "curate.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))  # keeps [database] (the test's PostgreSQL)
    data["screen"] = {"top": 5, "model": model}
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


def test_the_fallback_chain_of_a_task() -> None:
    settings = ModelSettings.model_validate(
        {"backend": "replay:all.jsonl", "batch_size": 3, "annotate": {"backend": "replay:a.jsonl"}, "speech": {}}
    )
    assert settings.for_task("score").backend == "replay:all.jsonl" and settings.for_task("score").batch_size == 3
    assert settings.for_task("conditions").backend == "replay:a.jsonl"
    assert settings.for_task("speech").backend == "replay:a.jsonl"  # a section without a backend falls through
    assert settings.for_task("score", "replay:cli.jsonl").backend == "replay:cli.jsonl"
    assert settings.for_task("book_meta", "replay:cli.jsonl").backend == "replay:a.jsonl"


def test_each_step_answers_with_its_own_model_and_a_rerun_computes_nothing(workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus = build_corpus(tmp_path / "corpus", books=8)
    files = split_replay(corpus.replay, workspace.root)
    ids = {task: ReplayStructured(str(path)).model_id for task, path in files.items()}
    assert len(set(ids.values())) == 4
    configure(
        workspace,
        {
            "backend": "replay:score.jsonl",
            "annotate": {"backend": "replay:book_meta.jsonl"},
            "conditions": {"backend": "replay:conditions.jsonl"},
            "speech": {"backend": "replay:speech.jsonl", "batch_size": 2},
        },
    )
    w = ["-w", str(workspace.root)]
    assert runner.invoke(app, [*w, "import", "candidates", str(corpus.candidates)]).exit_code == 0
    first = runner.invoke(app, [*w, "screen", "--json"])
    assert first.exit_code == 0, first.output
    ws = Workspace.open(workspace.root)
    settings = ws.settings.screen
    records = transition_records(ws, selected_candidates(ws, settings))
    assert len(records) == 5
    for record in records:
        provenance = {group: p["provenance"]["model"] for group, p in record["annotations"].items()}
        assert provenance == {"book_meta": ids["book_meta"], "conditions": ids["conditions"], "speech": ids["speech"]}
        assert record["score_provenance"]["model"] == ids["score"]
        assert all(len(p["provenance"]["prompt_hash"]) == 32 for p in record["annotations"].values())
    again = runner.invoke(app, [*w, "screen", "--json"])
    assert {s["step"]: s["computed"] for s in json.loads(again.stdout)["steps"]}["annotate"] == 0
    assert all(s["computed"] == 0 for s in json.loads(again.stdout)["steps"] if s["step"] != "select")

    # --backend replaces [screen.model] only: scores come from the whole file now, the annotation models stay
    both = runner.invoke(app, [*w, "screen", "--backend", f"replay:{corpus.replay}", "--json"])
    steps = {s["step"]: s["computed"] for s in json.loads(both.stdout)["steps"]}
    assert steps["score"] > 0 and steps["annotate"] == 0
    ws.close()
    ws = Workspace.open(workspace.root)
    [record] = transition_records(ws, selected_candidates(ws, settings))[:1]
    assert record["score_provenance"]["model"] == ReplayStructured(str(corpus.replay)).model_id
    assert record["annotations"]["conditions"]["provenance"]["model"] == ids["conditions"]
    ws.close()


def test_a_task_without_any_model_is_named(workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus = build_corpus(tmp_path / "corpus", books=8)
    files = split_replay(corpus.replay, workspace.root)
    configure(workspace, {"score": {"backend": f"replay:{files['score'].name}"}})
    w = ["-w", str(workspace.root)]
    runner.invoke(app, [*w, "import", "candidates", str(corpus.candidates)])
    result = runner.invoke(app, [*w, "screen"])
    assert result.exit_code == 2 and "screening task 'book_meta' needs a model" in result.output
    assert "[screen.model.book_meta]" in result.output


def test_settings_round_trip_through_curate_toml(tmp_path: Path) -> None:
    from curation.config import Settings

    settings = Settings()
    settings.screen = ScreenSettings(model={"backend": "replay:a.jsonl", "score": {"backend": "openai:http://x#m"}})
    settings.save(tmp_path / "curate.toml")
    loaded = Settings.load(tmp_path / "curate.toml")
    assert loaded.screen.model.for_task("score").backend == "openai:http://x#m"
    assert loaded.screen.model.annotate is None and loaded.story.duplicates == "annotate"
