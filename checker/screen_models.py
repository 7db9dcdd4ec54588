"""The models of ``curate screen``: one per model task, as ``[screen.model]`` and its ``[screen.model.<step>]``
sections name them (a backend named twice is opened once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curation.screening.settings import MODEL_TASKS, ScreenSettings

from .structured import open_structured_model


def open_screen_models(settings: ScreenSettings, root: Path, override: str | None = None) -> dict[str, Any]:
    """Task (score, book_meta, conditions, speech) -> its model, for the tasks that have a backend;
    ``override`` (``curate screen --backend``) replaces ``[screen.model]``'s backend, not a step's own."""
    opened: dict[tuple[str, int, int], Any] = {}
    models: dict[str, Any] = {}
    for task in MODEL_TASKS:
        chosen = settings.model.for_task(task, override)
        if not chosen.backend:
            continue
        key = (chosen.backend, chosen.concurrency, chosen.batch_size)
        if key not in opened:
            opened[key] = open_structured_model(chosen.backend, root, chosen.concurrency, chosen.batch_size)
        models[task] = opened[key]
    return models
