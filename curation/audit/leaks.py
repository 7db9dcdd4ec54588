"""Leak checks: what lets a model answer without the evidence the item claims to need.

- ``option_modality``: an option names what only a picture or a recording could show (a colour, a place
  in the frame, a manner of speaking) - TRIAD App. C.4. A heuristic, so a warning, never a block.
- ``shared_span``: two items of different groups share a contiguous 8-word span of context
  (Omni-StoryBench App. C string-overlap audit).
- ``option_in_context``: an option's text appears verbatim in the item's own context. A warning by default
  (anaphora items name their options in the context by design); ``[gates] option_in_context = "block"``
  makes it hold the item.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .text import contains_phrase, spans, words

SPAN_WORDS = 8
if TYPE_CHECKING:
    from .run import AuditSubject

WARNING_KINDS = frozenset({"option_modality"})
"""Leak kinds reported for a maintainer's eye that do not hold items back."""


def _vocabulary(text: str) -> frozenset[str]:
    return frozenset(text.split())


MODALITY_WORDS: dict[str, frozenset[str]] = {
    "image": _vocabulary(
        # spatial
        "left right above below behind beside foreground background corner top bottom centre center "
        "middle upper lower leftmost rightmost nearest farthest front "
        # colour
        "red orange yellow green blue purple violet pink brown black white grey gray beige turquoise "
        "golden silver crimson scarlet navy maroon teal cyan magenta colour color colored coloured"
    ),
    "audio": _vocabulary(
        "voice voiced tone tones whisper whispers whispered whispering shout shouts shouted shouting "
        "yell yelled yelling pitch pitched accent intonation sigh sighs sighed sighing laugh laughs laughing "
        "laughter giggle mumble mumbled mumbling murmur stutter stammer loud loudly quiet quietly softly "
        "sings singing hum humming sob sobbing crying cries echo hoarse raspy monotone rising falling "
        "stressed emphasis emphasised emphasized pause pauses paused"
    ),
}


@dataclass(frozen=True)
class Leak:
    kind: str
    items: list[str]
    evidence: dict[str, object] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Stable for the same kind, items and evidence, so a resolution outlives reruns."""
        key = "\n".join([self.kind, *self.items, str(sorted(self.evidence.items()))])
        return f"leak-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:10]}"

    @property
    def blocking(self) -> bool:
        return self.kind not in WARNING_KINDS and self.evidence.get("severity") != "warning"

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "kind": self.kind, "items": self.items, "evidence": self.evidence}


def option_modality_leaks(subjects: Sequence[AuditSubject]) -> list[Leak]:
    leaks = []
    for subject in subjects:
        for key, text in sorted(subject.options.items()):
            tokens = set(words(text))
            for modality, vocabulary in MODALITY_WORDS.items():
                if hits := sorted(tokens & vocabulary):
                    leaks.append(
                        Leak(
                            "option_modality",
                            [subject.id],
                            {
                                "option": key,
                                "text": text,
                                "modality": modality,
                                "words": hits,
                                "severity": "warning",
                            },
                        )
                    )
    return leaks


def option_in_context_leaks(subjects: Sequence[AuditSubject], severity: str = "warning") -> list[Leak]:
    """Options whose text stands in the item's own context; ``severity`` is ``warning`` or ``block``."""
    leaks = []
    for subject in subjects:
        context = words(subject.context)
        for key, text in sorted(subject.options.items()):
            if contains_phrase(context, words(text)):
                leaks.append(
                    Leak(
                        "option_in_context",
                        [subject.id],
                        {
                            "option": key,
                            "text": text,
                            "is_answer": key == subject.answer,
                            "severity": severity,
                        },
                    )
                )
    return leaks


def shared_span_leaks(
    subjects: Sequence[AuditSubject], skip_pairs: frozenset[tuple[str, str]] = frozenset()
) -> list[Leak]:
    """One leak per pair of items (different groups) sharing an 8-word span; the first span is quoted.

    ``skip_pairs`` (sorted id pairs) are pairs already clustered as text duplicates: the cluster blocks them.
    """
    owners: dict[tuple[str, ...], list[int]] = {}
    for index, subject in enumerate(subjects):
        for span in spans(words(subject.context), SPAN_WORDS):
            owners.setdefault(span, []).append(index)
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for span, indices in owners.items():
        for i in indices:
            for j in indices:
                a, b = subjects[i], subjects[j]
                if a.id < b.id and a.group != b.group and (a.id, b.id) not in skip_pairs:
                    found.setdefault((a.id, b.id), span)
    return [
        Leak("shared_span", [a, b], {"span": " ".join(span), "words": SPAN_WORDS, "severity": "block"})
        for (a, b), span in sorted(found.items())
    ]
