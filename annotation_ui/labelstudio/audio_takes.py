"""The producer's choice of a take served through Label Studio (TRIAD B.2), declared on the bridge's engine.

``audio:takes`` shows each voice-acted clip's recorded takes, one player each, and asks for the most natural one
(and an optional note). A vote counts only from the producer the clip's provenance names (the CLI's rule,
``records.producer_refusal``), and only for the takes that were pushed: a take added since makes the task stale.
Votes become choices exactly as ``curate audio choose`` records them (``records.choose_take``).
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Hashable
from typing import Any, ClassVar

from curation.audio_production.loaded import AudioFacts
from curation.audio_production.records import choose_take, producer_refusal
from curation.audio_production.tables import AudioTake
from curation.workspace import Workspace

from .audio_projects import AudioItemProject, text_of
from .connection import Connection
from .engine import pull, push
from .media import audio_html
from .projects import UNKNOWN_TASK
from .pulling import PullCounts, Seen, Verdict
from .pushing import PushReport, TaskSpec
from .results import Control

KEY = "audio:takes"
STALE = "stale: the item's takes changed after this task was pushed; push again and choose on the new task"
INSTRUCTION = (
    "<p>Listen to every take of the clip and choose the most natural one. Only the chosen take is released.</p>"
)


def _takes_hash(takes: list[AudioTake]) -> str:
    return hashlib.sha256("\n".join(f"{t.take}:{t.sha256}" for t in takes).encode()).hexdigest()


class TakeChoiceProject(AudioItemProject):
    """The producer's choice: a vote is the clip's producer choosing one of its takes."""

    key = KEY
    label = "audio takes"
    annotator = "producer"
    roles: ClassVar[frozenset[str]] = frozenset({"producer"})
    push_hint = "run `curate audio takes-push` first"

    def subjects(self, facts: AudioFacts) -> tuple[list[str], list[str]]:
        items = [c.item for c in facts.clips.values() if c.credits.voice_acted and facts.takes.get(c.item)]
        return items, [t.sha256 for item in items for t in facts.takes[item]]

    def instruction(self) -> str:
        return INSTRUCTION

    def label_config(self) -> str:
        return (
            '<View><HyperText name="takes" value="$takes"/>'
            '<Choices name="take" toName="takes" value="$options" choice="single-radio" required="true"/>'
            '<TextArea name="note" toName="takes" rows="2" maxSubmissions="1"/></View>'
        )

    def controls(self) -> dict[str, Control]:
        return {"take": Control("choices", required=True, from_options=True), "note": Control("textarea")}

    def tasks(self, connection: Connection) -> list[TaskSpec]:
        specs = []
        for item_id in self.items:
            takes = self.facts.takes[item_id]
            parts = [f"<p><b>{html.escape(item_id)}</b></p>"]
            for t in takes:
                parts.append(f"<p>{html.escape(t.take)}</p>{audio_html(connection, self.blobs[t.sha256])}")
            specs.append(
                TaskSpec(
                    ref=f"takes|{item_id}|{_takes_hash(takes)[:16]}",
                    subject=f"item:{item_id}",
                    inputs_hash=_takes_hash(takes),
                    data={"takes": "".join(parts), "options": [{"value": t.take} for t in takes]},
                    media=tuple(dict.fromkeys(self.blobs[t.sha256] for t in takes)),
                )
            )
        return specs

    def load(self) -> None:
        self.read()

    def locate(self, seen: Seen) -> str:
        return "" if seen.subject.removeprefix("item:") in self.items else UNKNOWN_TASK

    def admit(self, seen: Seen) -> Hashable | Verdict:
        """A vote on takes that changed since the push is stale, unless it made a choice then."""
        item_id, row = seen.subject.removeprefix("item:"), seen.row
        assert row is not None
        if seen.previous != "recorded" and _takes_hash(self.facts.takes[item_id]) != row.inputs_hash:
            return Verdict(seen, "skipped") if seen.skipped else Verdict(seen, "refused", reason=STALE)
        return (item_id, seen.person)

    def guard(self, seen: Seen) -> str | None:
        item_id = seen.subject.removeprefix("item:")
        assert seen.person is not None
        return producer_refusal(seen.person, item_id, self.facts.clips[item_id].credits.producer)

    def options(self, seen: Seen) -> list[str]:
        return [t.take for t in self.facts.takes.get(seen.subject.removeprefix("item:"), [])]

    def unchanged(self, item_id: str, person: str, values: dict[str, Any]) -> bool:
        take, note = text_of(values.get("take")), text_of(values.get("note")).strip()
        latest = self.facts.choices.get(item_id)
        return latest is not None and (latest.take, latest.producer, latest.note) == (take, person, note)

    def store(self, ws: Workspace, item_id: str, person: str, values: dict[str, Any]) -> None:
        take, note = text_of(values.get("take")), text_of(values.get("note")).strip()
        choose_take(ws, item_id, take, person, note)


def push_takes(ws: Workspace, connection: Connection, recreate: bool = False) -> PushReport:
    """Create or update the takes project: one task per voice-acted clip with takes."""
    return push(ws, connection, TakeChoiceProject(ws), recreate)


def pull_takes(ws: Workspace, connection: Connection) -> PullCounts:
    """Store the producers' Label Studio choices as take choices."""
    return pull(ws, connection, [TakeChoiceProject(ws)])[0]
