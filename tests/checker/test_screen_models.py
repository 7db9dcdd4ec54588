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
