"""The eight probe views and the item as the checker sees it.

A view shows a subset of an item's modalities (curation.vocab.ALL_VIEWS); the question and the options
are shown in every view, the label in none.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from curation.vocab import ALL_VIEWS, FULL_VIEW, MODALITIES, STRICT_VIEWS, view_modalities

PROBE_VIEWS: tuple[str, ...] = tuple(ALL_VIEWS)
"""``none``, ``text``, ``image``, ``audio``, the three pairs, ``text+image+audio``."""
STRICT_PROBE_VIEWS: tuple[str, ...] = ("none", *STRICT_VIEWS)
"""Every view but the full one (sampled with the smaller K)."""
PAIR_VIEWS: tuple[str, ...] = tuple(v for v in ALL_VIEWS if len(view_modalities(v)) == 2)

__all__ = ["FULL_VIEW", "MODALITIES", "PAIR_VIEWS", "PROBE_VIEWS", "STRICT_PROBE_VIEWS", "ProbeItem", "shows"]


def shows(view: str, modality: str) -> bool:
    """Whether ``view`` shows ``modality``."""
    return modality in view_modalities(view)


@dataclass(frozen=True)
class ProbeItem:
    """What the probes need of an item. ``content_hash`` changes whenever anything a probe sees changes."""

    id: str
    content_hash: str
    context: str
    question: str
    options: dict[str, str]
    answer: str
    image: Path
    audio: Path
    audio_transcript: str | None = None
    """Used instead of the audio by models without audio input (TRIAD G.6), when the author gave one."""
    audio_seconds: float | None = None

    @staticmethod
    def hash_content(
        context: str, question: str, options: dict[str, str], answer: str, image_digest: str, audio_digest: str
    ) -> str:
        """A content hash for items that do not come with one (tests, the replay-only workflow)."""
        blob = json.dumps([context, question, options, answer, image_digest, audio_digest], sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()
