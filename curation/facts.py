"""The plain facts the derivation reads: an item, a review record, a stage's outcome.

They live apart from ``workflow`` so that the kinds (``curation.kinds``), whose stages judge these facts,
and the workflow, which iterates the kinds, both import them without importing each other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .vocab import MODALITIES

_ENCODE = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode
"""``json.dumps`` with these options builds a new encoder per call; the derivation hashes every stage's inputs
of every item, so one encoder is made once."""


def digest(*parts: Any) -> str:
    """A stable hash of JSON-able parts: what stage inputs and group inputs are made of."""
    return hashlib.sha256(_ENCODE(parts).encode()).hexdigest()


@dataclass(frozen=True)
class ItemFacts:
    """What the workflow needs of an item (loaded in bulk, without ORM objects).

    Fields of a modality the item lacks are empty strings. ``extra`` holds a kind's own fields (a kind
    other than ``mcq`` may have no options or answer).
    """

    id: str
    group: str
    author: str
    revision: int
    context: str
    question: str
    options: dict[str, str]
    answer: str
    image: str
    audio: str
    audio_source: str
    content_hash: str
    kind: str = "mcq"
    modalities: tuple[str, ...] = MODALITIES
    extra: Mapping[str, Any] = field(default_factory=dict)
    image_source: str = ""
    """The image's provenance source (``ai_generated`` images are screened for artefacts)."""
    former_authors: frozenset[str] = frozenset()
    """Who authored an earlier revision but not this one: still authors for separation and exposure."""

    def authored_by(self, person: str) -> bool:
        """Authorship is history: the current author or the author of any earlier revision."""
        return person == self.author or person in self.former_authors

    def stage_inputs(self, stage: str) -> str:
        """Hash of what a stage judges; a review stays valid while it is unchanged."""
        from .kinds import kind_of

        found = kind_of(self.kind).stage(stage)
        if found.scope != "item":
            raise ValueError(f"{stage} is not an item stage")
        return found.inputs(self)


class RecordFacts(NamedTuple):
    """One review record as the derivation reads it (a tuple: 70,000 of them load in a blink)."""

    subject: str
    stage: str
    reviewer: str
    revision: int
    inputs_hash: str
    payload: Mapping[str, Any]
    id: int


@dataclass
class StageOutcome:
    """``passed`` is None while the stage lacks its quorum.

    ``held``: the stage lets the item go on to its later stages, but ``reasons`` hold it (state ``held``) once
    every stage is through, until a maintainer settles them (a checklist whose verdict depends on the rule).
    """

    passed: bool | None
    reasons: list[str] = field(default_factory=list)
    held: bool = False
