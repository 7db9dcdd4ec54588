"""The eight probe views and the item as the checker sees it.

A view shows a subset of an item's modalities (curation.vocab.ALL_VIEWS); the question and the options
are shown in every view, the label in none.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from curation.vocab import ALL_VIEWS, FULL_VIEW, MODALITIES, view_modalities, view_name, views_of

PROBE_VIEWS: tuple[str, ...] = tuple(ALL_VIEWS)
"""``none``, ``text``, ``image``, ``audio``, the three pairs, ``text+image+audio``."""

__all__ = ["FULL_VIEW", "MODALITIES", "PROBE_VIEWS", "ProbeItem", "shows"]


def shows(view: str, modality: str) -> bool:
    """Whether ``view`` shows ``modality``."""
    return modality in view_modalities(view)


@dataclass(frozen=True)
class ProbeItem:
    """What the probes need of an item.

    ``content_hash`` is the workspace's hash of the whole item (gate results are tied to it);
    ``input_hash`` covers only what a probe sees, so relabelling or retagging an item re-judges it from
    cached probe outputs without probing again.
    """

    id: str
    content_hash: str
    context: str
    question: str
    options: dict[str, str]
    answer: str
    image: Path | None
    audio: Path | None
    image_sha: str
    audio_sha: str
    audio_transcript: str | None = None
    """Used instead of the audio by models without audio input (TRIAD G.6): the clip's stored speech-to-text
    transcript (``curate transcribe``), else the one the author gave."""
    audio_transcript_source: str | None = None
    """Who wrote ``audio_transcript``: the speech-to-text model's id, or ``author``."""
    audio_seconds: float | None = None
    modalities: tuple[str, ...] = MODALITIES
    """The item's own modalities: its probe views are the subsets of these (``none`` included)."""

    @property
    def views(self) -> tuple[str, ...]:
        """The item's probe views, ``none`` first and its full view last."""
        return PROBE_VIEWS if self.modalities == MODALITIES else views_of(self.modalities)

    @property
    def full_view(self) -> str:
        return view_name(set(self.modalities))

    @property
    def input_hash(self) -> str:
        blob = json.dumps(
            [self.context, self.question, self.options, self.image_sha, self.audio_sha, self.audio_transcript],
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()
