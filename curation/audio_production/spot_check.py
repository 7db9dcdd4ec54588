"""The spot-check sample (TRIAD B.2: cross-actor consistency spot-checked on a 5 % sample by an independent
listener): a seeded, reproducible draw over the voice-acted clips."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable

from ..workspace import Workspace
from .loaded import AudioFacts, load_audio_facts


def draw(items: Iterable[str], rate: float, seed: int) -> list[str]:
    """``ceil(rate × n)`` of ``items`` (at least one while any exists and ``rate`` > 0), those whose
    SHA-256 of ``"SEED:ID"`` is smallest: the same items, rate and seed give the same sample, whatever the order."""
    pool = sorted(set(items))
    if not pool or rate <= 0:
        return []
    size = max(1, math.ceil(rate * len(pool)))
    ranked = sorted(pool, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    return sorted(ranked[:size])


def sample_of(ws: Workspace, facts: AudioFacts) -> list[str]:
    voice_acted = [c.item for c in facts.clips.values() if c.credits.voice_acted]
    return draw(voice_acted, ws.settings.audio.spot_check_rate, ws.settings.audio.spot_check_seed)


def spot_check_sample(ws: Workspace) -> list[str]:
    """The items whose clips the spot check covers, in id order."""
    return sample_of(ws, load_audio_facts(ws))


def spot_check_queue(ws: Workspace, listener: str) -> list[str]:
    """The sampled clips ``listener`` may check and has not checked as they are now: never a clip they spoke in,
    produced or whose item they wrote (TRIAD B.4)."""
    facts = load_audio_facts(ws)
    out = []
    for item in sample_of(ws, facts):
        clip = facts.clips[item]
        if listener in clip.credits.people or listener == clip.author:
            continue
        if any(c.listener == listener and c.sha256 == clip.audio for c in facts.spot_checks.get(item, [])):
            continue
        out.append(item)
    return out


def produced_by(ws: Workspace, producer: str) -> list[str]:
    """The items whose clip names ``producer`` as its producer, in id order: the ones whose takes they choose."""
    return [c.item for c in load_audio_facts(ws).clips.values() if c.credits.producer == producer]
