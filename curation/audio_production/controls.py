"""TRIAD B.5's recording controls per audio-perturbed group: do the sisters' clips share actor, session and
equipment? What the ``recording`` gate flags and what a release states, from one computation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable

from .loaded import AudioFacts, Clip

CONTROLS = ("actor", "session", "equipment")


def audio_groups(facts: AudioFacts, items: Collection[str] | None = None) -> dict[str, list[Clip]]:
    """The clips of each audio-perturbed group (only ``items`` when given), by group id in id order."""
    groups: dict[str, list[Clip]] = defaultdict(list)
    for clip in facts.clips.values():
        if facts.perturbed.get(clip.group) == "audio" and (items is None or clip.item in items):
            groups[clip.group].append(clip)
    return dict(sorted(groups.items()))


def control_matches(sisters: Iterable[Clip]) -> dict[str, bool]:
    """Each control some sister's clip names -> whether every sister's clip names the same; a control no clip
    names is left out (nothing recorded, nothing stated)."""
    values = [s.credits.controls for s in sisters]
    return {name: len({v[n] for v in values}) == 1 for n, name in enumerate(CONTROLS) if any(v[n] for v in values)}


def differing(sisters: Iterable[Clip]) -> list[str]:
    """The controls in which the sisters' clips differ, in ``CONTROLS`` order."""
    return [name for name, same in control_matches(sisters).items() if not same]
