"""The audio production facts loaded at once: what the gates, the sample and the release claims read."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlmodel import col

from ..tables import Item, SceneGroup
from ..workspace import Workspace
from .credits import AudioCredits, credits_of
from .tables import AudioTake, Consent, SpotCheck, TakeChoice


@dataclass(frozen=True)
class Clip:
    """An item's audio as the audio gates judge it."""

    item: str
    group: str
    audio: str
    content_hash: str
    credits: AudioCredits
    author: str = ""


@dataclass
class AudioFacts:
    clips: dict[str, Clip] = field(default_factory=dict)
    perturbed: dict[str, str] = field(default_factory=dict)
    """Group -> its perturbed modality."""
    consents: dict[str, Consent] = field(default_factory=dict)
    """Speaker -> their latest consent record."""
    takes: dict[str, list[AudioTake]] = field(default_factory=lambda: defaultdict(list))
    choices: dict[str, TakeChoice] = field(default_factory=dict)
    """Item -> the latest take choice."""
    spot_checks: dict[str, list[SpotCheck]] = field(default_factory=lambda: defaultdict(list))

    @property
    def consented(self) -> set[str]:
        return {name for name, row in self.consents.items() if not row.withdrawn}

    def without_consent(self, clip: Clip) -> list[str]:
        """The clip's speakers with no standing consent record."""
        return [s for s in clip.credits.speakers if s not in self.consented]


def load_audio_facts(ws: Workspace) -> AudioFacts:
    facts = AudioFacts()
    with ws.session() as s:
        rows = s.execute(
            select(
                col(Item.id),
                col(Item.group_id),
                col(Item.audio),
                col(Item.content_hash),
                col(Item.provenance),
                col(Item.author),
            )
            .where(col(Item.kind) == "mcq", col(Item.audio).is_not(None))
            .order_by(col(Item.id))
        ).all()
        for item_id, group, audio, digest, provenance, author in rows:
            facts.clips[item_id] = Clip(item_id, group, audio, digest, credits_of(provenance), author)
        facts.perturbed = dict(s.execute(select(col(SceneGroup.id), col(SceneGroup.perturbed))).all())
        for c in s.execute(select(Consent).order_by(col(Consent.id))).scalars():
            facts.consents[c.speaker] = c
        for t in s.execute(select(AudioTake).order_by(col(AudioTake.item_id), col(AudioTake.take))).scalars():
            facts.takes[t.item_id].append(t)
        for choice in s.execute(select(TakeChoice).order_by(col(TakeChoice.id))).scalars():
            facts.choices[choice.item_id] = choice
        for check in s.execute(select(SpotCheck).order_by(col(SpotCheck.id))).scalars():
            facts.spot_checks[check.item_id].append(check)
        s.expunge_all()
    return facts
