"""`open_screen_models`: one model per task as [screen.model] and its step sections name them, each backend
opened once, `--backend` replacing the default only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.screen_models import open_screen_models
from curation.errors import CurateError
from curation.screening.settings import ScreenSettings


def replay(path: Path) -> str:
    path.write_text(json.dumps({"subject": "x", "task": "score", "output": {}}) + "\n", encoding="utf-8")
    return f"replay:{path.name}"


def test_tasks_share_a_backend_named_twice_and_the_override_replaces_the_default(tmp_path: Path) -> None:
    default, scores, notes = replay(tmp_path / "d.jsonl"), replay(tmp_path / "s.jsonl"), replay(tmp_path / "n.jsonl")
    settings = ScreenSettings(model={"backend": default, "score": {"backend": scores}, "annotate": {"backend": notes}})
    models = open_screen_models(settings, tmp_path)
    assert set(models) == {"score", "book_meta", "conditions", "speech"}
    assert models["score"].model_id.startswith("s.jsonl@")
    assert models["book_meta"] is models["conditions"] is models["speech"]  # one replay opened once
    assert models["speech"].model_id.startswith("n.jsonl@")
    only_default = open_screen_models(
        ScreenSettings(model={"backend": default}), tmp_path, replay(tmp_path / "o.jsonl")
    )
    assert {m.model_id.split("@")[0] for m in only_default.values()} == {"o.jsonl"}
    assert open_screen_models(ScreenSettings(), tmp_path) == {}


def test_a_bad_step_backend_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CurateError, match="unknown model backend"):
        open_screen_models(ScreenSettings(model={"conditions": {"backend": "gpt:somewhere"}}), tmp_path)


def test_scores_from_the_tiny_model_and_annotations_from_a_replay(workspace, tiny_omni, hf_backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A model per step through a real model: the tiny random Qwen2.5-Omni scores (schema-constrained), the
    recorded outputs annotate; each proposal names the model that wrote it."""
    from checker.structured import ReplayStructured, TransformersStructured
    from curation.screening.importer import import_candidates
    from curation.screening.pipeline import run_screen, selected_candidates
    from curation.screening.transitions import transition_records
    from omnicurate.demo.story_corpus import build_corpus

    corpus = build_corpus(tmp_path / "corpus", books=3, plant=False)
    first_book = [line for line in corpus.candidates.read_text().splitlines() if '"book": "bk00001"' in line][:3]
    corpus.candidates.write_text("\n".join(first_book) + "\n")
    import_candidates(workspace, corpus.candidates)
    scorer = TransformersStructured(
        str(tiny_omni), model=hf_backend.model, max_string=4, max_tokens=400, max_whitespace=0, micro_batch=3
    )
    notes = ReplayStructured(str(corpus.replay))
    settings = ScreenSettings(steps=["score", "select", "annotate"], top=1)
    funnel = run_screen(workspace, settings, notes, models={"score": scorer})
    assert funnel.steps[0].computed == 3 and funnel.selected == 1
    [record] = transition_records(workspace, selected_candidates(workspace, settings))
    assert record["score_provenance"]["model"] == scorer.model_id != notes.model_id
    assert {p["provenance"]["model"] for p in record["annotations"].values()} == {notes.model_id}
    again = run_screen(workspace, settings, notes, models={"score": scorer})
    assert [s.computed for s in again.steps] == [0, 0, 0]
