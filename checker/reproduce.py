"""The checker's verdicts re-derived from a release's published probe outputs (``replay:``), no workspace.

``curate release reproduce`` hands this function to ``exports.reproduce`` (the two packages sit side by side
and do not import each other).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .backends.replay import ReplayBackend
from .estimators import EstimatorConfig
from .run import run_check
from .views import ProbeItem


def replay_verdicts(path: Path, units: Sequence[Mapping[str, Any]], estimator: str | None) -> dict[str, str]:
    """Each covered unit's verdict from the replay file, under the named estimator's default parameters."""
    backend = ReplayBackend(str(path))
    items = [
        ProbeItem(
            id=u["id"],
            content_hash=u["content_hash"],
            context=u["context"],
            question=u["question"],
            options=dict(u["options"]),
            answer=u["answer"],
            image=None,
            audio=None,
            image_sha=u["image"],
            audio_sha=u["audio"],
            modalities=tuple(u["modalities"]),
        )
        for u in units
        if backend.covers(u["id"])
    ]
    results, _ = run_check(items, backend, EstimatorConfig(estimator or "sample"))
    return {r.item: r.verdict for r in results}
