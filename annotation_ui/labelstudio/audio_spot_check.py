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

from sqlalchemy import select
from sqlmodel import col

from curation.audio_production.credits import listener_refusal
from curation.audio_production.loaded import AudioFacts, Clip, load_audio_facts
from curation.audio_production.records import Verdict as SpotVerdict
from curation.audio_production.records import record_spot_check
from curation.audio_production.spot_check import sample_of
from curation.errors import CurateError
from curation.tables import Asset
from curation.workspace import Workspace

from .connection import Connection
from .engine import ProjectKind, Pulled, pull, push
from .media import audio_html
from .projects import AnnotationOutcome
from .pulling import PullCounts, RatingPull, Seen, Verdict
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


class SpotCheckProject(ProjectKind):
    """The spot check: a vote is one listener's verdict on one sampled clip."""

    key = KEY
    quorum = 1
    annotator = "listener"
    roles: ClassVar[frozenset[str]] = frozenset({"reviewer"})
    push_hint = "run `curate audio spot-push` first"

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.title = f"{ws.root.name}: audio spot check"
        self._read()

    def _read(self) -> None:
        self.facts: AudioFacts = load_audio_facts(self.ws)
        self.sample = sample_of(self.ws, self.facts)
        with self.ws.session() as s:
            shas = [c.audio for c in self.facts.clips.values()]
            self.blobs = {
                a.sha256: f"{a.sha256}{a.ext}"
                for a in s.execute(select(Asset).where(col(Asset.sha256).in_(shas))).scalars()
            }

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
        for item_id in self.sample:
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
        self._read()

    def locate(self, seen: Seen) -> str:
        return "" if seen.subject.removeprefix("item:") in self.sample else NOT_SAMPLED

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

    def new_report(self, project: Any) -> RatingPull:
        return RatingPull(about={"key": KEY}, label="audio spot check")

    def refusal(self, outcome: AnnotationOutcome) -> dict[str, Any]:
        return {
            "annotation": outcome.annotation,
            "task": outcome.task,
            "item": outcome.subject,
            "user": outcome.user,
            "reason": outcome.reason,
        }

    def record(self, ws: Workspace, pulled: Pulled, report: PullCounts) -> list[AnnotationOutcome]:
        outcomes = []
        for slot, vote in sorted(pulled.votes.items(), key=lambda pair: str(pair[0])):
            item_id, listener = cast(tuple[str, str], slot)
            values = vote.values or {}
            verdict, note = text_of(values.get("verdict")), text_of(values.get("note")).strip()
            clip = self.facts.clips[item_id]
            stored = [
                c for c in self.facts.spot_checks.get(item_id, []) if (c.listener, c.sha256) == (listener, clip.audio)
            ]
            if stored and (stored[0].verdict, stored[0].note) == (verdict, note):
                report.unchanged += 1
                outcomes.append(vote.seen.outcome("recorded"))
                continue
            try:
                record_spot_check(ws, item_id, listener, cast(SpotVerdict, verdict), note)
            except CurateError as exc:
                outcomes.append(vote.seen.outcome("refused", str(exc)))
                continue
            report.recorded += 1
            outcomes.append(vote.seen.outcome("recorded"))
        return outcomes


def text_of(value: Any) -> str:
    """A control's value as text (a single choice or a text area)."""
    return str(value[0] if isinstance(value, list) and value else value or "")


def push_spot_check(ws: Workspace, connection: Connection, recreate: bool = False) -> PushReport:
    """Create or update the spot-check project: one task per sampled clip."""
    return push(ws, connection, SpotCheckProject(ws), recreate)


def pull_spot_check(ws: Workspace, connection: Connection) -> PullCounts:
    """Store the listeners' verdicts as spot checks."""
    return pull(ws, connection, [SpotCheckProject(ws)])[0]
