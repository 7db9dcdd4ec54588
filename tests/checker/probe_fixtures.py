"""Helpers the checker tests share: probe items with real media paths, a scripted backend."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from checker.backends.base import ProbeBackend, ProbeOutput
from checker.estimators import EstimatorConfig
from checker.prompts import ProbeRequest
from checker.views import ProbeItem


def make_item(media_dir: Path, item_id: str = "it-1", answer: str = "A", **changes) -> ProbeItem:  # type: ignore[no-untyped-def]
    fields = dict(
        id=item_id,
        content_hash="c-" + item_id,
        context="Sure, that was a really helpful suggestion.",
        question="How does the speaker feel about the suggestion?",
        options={"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"},
        answer=answer,
        image=media_dir / "red.png",
        audio=media_dir / "sweep.wav",
        image_sha="img-red",
        audio_sha="aud-sweep",
    )
    fields.update(changes)
    return ProbeItem(**fields)


class ScriptedBackend(ProbeBackend):
    """Answers from a table (item, view) → samples; counts what it was asked; can fail after N batches."""

    kind = "scripted"

    def __init__(
        self,
        answers: dict[tuple[str, str], list[str]] | None = None,
        *,
        batch_size: int = 8,
        fail_after_batches: int | None = None,
    ) -> None:
        self.answers = answers or {}
        self.batch_size = batch_size
        self.fail_after_batches = fail_after_batches
        self.asked: list[tuple[str, str]] = []
        self.batches = 0

    @property
    def model_id(self) -> str:
        return "scripted-model"

    def probe(self, requests: Sequence[ProbeRequest], config: EstimatorConfig) -> list[ProbeOutput]:
        if self.fail_after_batches is not None and self.batches >= self.fail_after_batches:
            raise KeyboardInterrupt("killed mid-run")
        self.batches += 1
        out = []
        for r in requests:
            self.asked.append((r.item_id, r.view))
            samples = self.answers.get((r.item_id, r.view), list(r.option_keys[:2]) * 3)
            out.append(
                ProbeOutput(
                    r.item_id,
                    r.view,
                    samples=samples[: config.k_for(r.view)],
                    audio_route=r.audio_route,
                    model_calls=1,
                    generated_tokens=len(samples),
                )
            )
        return out
