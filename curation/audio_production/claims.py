"""What a release may state about its clips' speakers: consent only for clips whose every named speaker has a
standing consent record (design.md, "Releases — what a release may claim")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..workspace import Workspace
from .loaded import load_audio_facts


@dataclass(frozen=True)
class ConsentSummary:
    clips: int = 0
    """Released items with audio."""
    with_speakers: int = 0
    """Of those, clips whose provenance names speakers."""
    consented: int = 0
    """Of those, clips whose every speaker has a standing consent record."""
    scopes: dict[str, int] = field(default_factory=dict)
    """Consent scope -> the consented clips whose speakers consented under it."""


def consent_summary(ws: Workspace, released: Iterable[str]) -> ConsentSummary:
    facts = load_audio_facts(ws)
    clips = [facts.clips[i] for i in sorted(set(released)) if i in facts.clips]
    named = [c for c in clips if c.credits.speakers]
    consented = [c for c in named if not facts.without_consent(c)]
    scopes = Counter(facts.consents[s].scope for c in consented for s in sorted(set(c.credits.speakers)))
    return ConsentSummary(len(clips), len(named), len(consented), dict(sorted(scopes.items())))
