"""What the audio production projects share (TRIAD B.2): each shows voice-acted clips and takes a person's answer
on one item, stored by the same domain function the CLI uses (``curation.audio_production.records``).

A declaration gives ``label``, the items it asks about and the clips it plays (``subjects``), whether a vote is
already stored as given (``unchanged``) and how to store it (``store``); this reads the workspace's audio facts
and the clips' store names, and owns the report, the refusal shape and the record loop.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar, cast

from sqlalchemy import select
from sqlmodel import col

from curation.audio_production.loaded import AudioFacts, load_audio_facts
from curation.errors import CurateError
from curation.tables import Asset
from curation.workspace import Workspace

from .engine import ProjectKind, Pulled
from .projects import AnnotationOutcome
from .pulling import PullCounts, RatingPull


def text_of(value: Any) -> str:
    """A control's value as text (a single choice or a text area)."""
    return str(value[0] if isinstance(value, list) and value else value or "")


class AudioItemProject(ProjectKind):
    """A vote is one person's answer on one item's clip; the item ids and clip hashes come from ``subjects``."""

    quorum = 1
    label: ClassVar[str]

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.title = f"{ws.root.name}: {self.label}"
        self.read()

    def read(self) -> None:
        """The audio facts now, the items asked about and the store names of the clips they play."""
        self.facts: AudioFacts = load_audio_facts(self.ws)
        self.items, played = self.subjects(self.facts)
        with self.ws.session() as s:
            self.blobs = {
                a.sha256: f"{a.sha256}{a.ext}"
                for a in s.execute(select(Asset).where(col(Asset.sha256).in_(played))).scalars()
            }

    @abstractmethod
    def subjects(self, facts: AudioFacts) -> tuple[list[str], list[str]]:
        """The item ids asked about, and the content hashes of every clip their tasks play."""

    @abstractmethod
    def unchanged(self, item_id: str, person: str, values: dict[str, Any]) -> bool:
        """Whether the workspace already holds this person's answer on this item as given."""

    @abstractmethod
    def store(self, ws: Workspace, item_id: str, person: str, values: dict[str, Any]) -> None:
        """Record the answer through the CLI's own function (raising ``CurateError`` to refuse it)."""

    def new_report(self, project: Any) -> RatingPull:
        return RatingPull(about={"key": self.key}, label=self.label)

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
            item_id, person = cast(tuple[str, str], slot)
            values = vote.values or {}
            if self.unchanged(item_id, person, values):
                report.unchanged += 1
                outcomes.append(vote.seen.outcome("recorded"))
                continue
            try:
                self.store(ws, item_id, person, values)
            except CurateError as exc:
                outcomes.append(vote.seen.outcome("refused", str(exc)))
                continue
            report.recorded += 1
            outcomes.append(vote.seen.outcome("recorded"))
        return outcomes
