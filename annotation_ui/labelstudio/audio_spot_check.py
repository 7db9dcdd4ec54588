"""The audio spot check served through Label Studio (TRIAD B.2), declared on the bridge's engine.

``audio:spot_check`` shows each sampled voice-acted clip (``curation.audio_production.spot_check``) beside its
group's other clips, and asks a listener whether it is consistent with the other actors' recordings. A vote
counts only from a reviewer who neither spoke in the clip, produced it nor wrote its item (TRIAD B.4, the rule
``curate audio spot-check`` applies), and only for the clip that was pushed: a clip re-recorded since is a new
task. Votes become spot checks exactly as the CLI stores them (``records.record_spot_check``).
"""

from __future__ import annotations

import html
from collections.abc import Hashable
from typing import Any, ClassVar, cast

from curation.audio_production.credits import listener_refusal
from curation.audio_production.loaded import AudioFacts, Clip
from curation.audio_production.records import Verdict as SpotVerdict
from curation.audio_production.records import record_spot_check
from curation.audio_production.spot_check import sample_of
from curation.workspace import Workspace

from .audio_projects import AudioItemProject, text_of
from .connection import Connection
from .engine import pull, push
from .media import audio_html
from .pulling import PullCounts, Seen, Verdict
from .pushing import PushReport, TaskSpec
from .results import Control

KEY = "audio:spot_check"
VERDICTS = ("consistent", "inconsistent")
NOT_SAMPLED = "the clip is no longer in the spot-check sample (`curate audio spot-sample`)"
STALE = "stale: the item's audio changed after this task was pushed; push again and check the new clip"
RETIRED = "the item's audio changed since; the spot check this annotation made stays with the earlier clip"
INSTRUCTION = (
    "<p>Listen to the clip, then to the other clips of its group. Is it consistent with the other actors' "
    "recordings (voice, delivery, level, room)? You may not check a clip you spoke in, produced, or whose item "
    "you wrote.</p>"
)


class SpotCheckProject(AudioItemProject):
    """The spot check: a vote is one listener's verdict on one sampled clip."""

    key = KEY
    label = "audio spot check"
    annotator = "listener"
    roles: ClassVar[frozenset[str]] = frozenset({"reviewer"})
    push_hint = "run `curate audio spot-push` first"

    def subjects(self, facts: AudioFacts) -> tuple[list[str], list[str]]:
        return sample_of(self.ws, facts), [c.audio for c in facts.clips.values()]

    def instruction(self) -> str:
        return INSTRUCTION

    def label_config(self) -> str:
        return (
            '<View><HyperText name="clip" value="$clip"/>'
            '<Choices name="verdict" toName="clip" choice="single-radio" required="true">'
            + "".join(f'<Choice value="{v}"/>' for v in VERDICTS)
            + '</Choices><TextArea name="note" toName="clip" rows="2" maxSubmissions="1"/></View>'
        )

    def controls(self) -> dict[str, Control]:
        return {"verdict": Control("choices", required=True, choices=VERDICTS), "note": Control("textarea")}

    def _sisters(self, clip: Clip) -> list[Clip]:
        return [c for c in self.facts.clips.values() if c.group == clip.group and c.item != clip.item]

    def tasks(self, connection: Connection) -> list[TaskSpec]:
        specs = []
        for item_id in self.items:
            clip = self.facts.clips[item_id]
            sisters = self._sisters(clip)
            parts = [f"<p><b>{html.escape(item_id)}</b></p>", audio_html(connection, self.blobs[clip.audio])]
            if sisters:
                parts.append("<p>The other clips of its group:</p>")
            for sister in sisters:
                parts.append(f"<p>{html.escape(sister.item)}</p>{audio_html(connection, self.blobs[sister.audio])}")
            specs.append(
                TaskSpec(
                    ref=f"spot_check|{item_id}|{clip.audio[:16]}",
                    subject=f"item:{item_id}",
                    inputs_hash=clip.audio,
                    data={"clip": "".join(parts)},
                    media=tuple(self.blobs[c.audio] for c in (clip, *sisters)),
                )
            )
        return specs

    def load(self) -> None:
        self.read()

    def locate(self, seen: Seen) -> str:
        return "" if seen.subject.removeprefix("item:") in self.items else NOT_SAMPLED

    def admit(self, seen: Seen) -> Hashable | Verdict:
        """A vote on a clip re-recorded since the push is stale, or retired once it made a spot check."""
        item_id, row = seen.subject.removeprefix("item:"), seen.row
        assert row is not None
        if self.facts.clips[item_id].audio != row.inputs_hash:
            if seen.previous == "recorded":
                return Verdict(seen, "retired", reason=RETIRED)
            return Verdict(seen, "skipped") if seen.skipped else Verdict(seen, "refused", reason=STALE)
        return (item_id, seen.person)

    def guard(self, seen: Seen) -> str | None:
        clip = self.facts.clips[seen.subject.removeprefix("item:")]
        assert seen.person is not None
        return listener_refusal(seen.person, clip.item, clip.credits.people, clip.author)

    def unchanged(self, item_id: str, person: str, values: dict[str, Any]) -> bool:
        verdict, note = text_of(values.get("verdict")), text_of(values.get("note")).strip()
        clip = self.facts.clips[item_id]
        stored = [c for c in self.facts.spot_checks.get(item_id, []) if (c.listener, c.sha256) == (person, clip.audio)]
        return bool(stored) and (stored[0].verdict, stored[0].note) == (verdict, note)

    def store(self, ws: Workspace, item_id: str, person: str, values: dict[str, Any]) -> None:
        verdict, note = text_of(values.get("verdict")), text_of(values.get("note")).strip()
        record_spot_check(ws, item_id, person, cast(SpotVerdict, verdict), note)


def push_spot_check(ws: Workspace, connection: Connection, recreate: bool = False) -> PushReport:
    """Create or update the spot-check project: one task per sampled clip."""
    return push(ws, connection, SpotCheckProject(ws), recreate)


def pull_spot_check(ws: Workspace, connection: Connection) -> PullCounts:
    """Store the listeners' verdicts as spot checks."""
    return pull(ws, connection, [SpotCheckProject(ws)])[0]
