"""The human baseline served through Label Studio: two projects per campaign, declared on the bridge's engine.

``baseline:<campaign>:open`` shows each subset item (image, audio, context, question) with a text box and no
options; ``baseline:<campaign>:standard`` shows the options (never the label) as a single choice. Each project
asks every item of its campaign's raters (the project's overlap). A vote counts only from a rater the campaign
assigned to the item, and a Standard vote only once that rater's open-ended answer is recorded (pull the open
project first: ``curate baseline pull`` does), so that nobody answers open-ended after seeing the options.
Votes become answers exactly as the app's page stores them (``curation.baseline.campaign.record_answer``,
source ``labelstudio``); answers are final, so a changed annotation is refused with the reason.
"""

from __future__ import annotations

import html
from collections.abc import Hashable
from typing import Any, ClassVar

from sqlalchemy import select

from curation.baseline.campaign import FORMS, answers_of, assignments_of, get_campaign, record_answer
from curation.errors import CurateError
from curation.tables import Asset, Item
from curation.workspace import Workspace

from .connection import Connection
from .engine import ProjectKind, Pulled, pull, push
from .media import audio_html, image_html
from .projects import UNKNOWN_TASK, AnnotationOutcome
from .pulling import PullCounts, RatingPull, Seen
from .pushing import PushReport, TaskSpec
from .results import Control
from .tables import LsProject

INSTRUCTIONS = {
    "open": "Answer the question in your own words, from the text, the image and the audio together. "
    "The options come later, in the Standard project.",
    "standard": "Pick the option that answers the question, from the text, the image and the audio together.",
}


def project_key(name: str, form: str) -> str:
    return f"baseline:{name}:{form}"


class BaselineProject(ProjectKind):
    """One form of a baseline campaign: a vote is one assigned rater's answer to one item."""

    annotator = "rater"
    roles: ClassVar[frozenset[str]] = frozenset({"reviewer"})

    def __init__(self, ws: Workspace, name: str, form: str) -> None:
        if form not in FORMS:
            raise CurateError(f"unknown form {form!r}: give open or standard")
        self.ws, self.name, self.form = ws, name, form
        with ws.session() as s:
            self.campaign = get_campaign(s, name)
            self.assigned = assignments_of(s, name)
            self.items = {
                i.id: i
                for i in s.execute(select(Item).where(Item.id.in_(list(self.campaign.items)))).scalars()  # type: ignore[attr-defined]
            }
            shas = [x for i in self.items.values() for x in (i.image, i.audio) if x]
            self.blobs = {
                a.sha256: f"{a.sha256}{a.ext}"
                for a in s.execute(select(Asset).where(Asset.sha256.in_(shas))).scalars()  # type: ignore[attr-defined]
            }
        self.answered: set[tuple[str, str]] = set()
        self.key = project_key(name, form)
        self.title = f"{ws.root.name}: human baseline {name} ({'open-ended' if form == 'open' else 'Standard'})"
        self.quorum = self.campaign.raters_per_item
        self.push_hint = f"run `curate baseline push {name}` first"

    def instruction(self) -> str:
        return f"<p>{html.escape(INSTRUCTIONS[self.form])}</p>"

    def label_config(self) -> str:
        control = (
            '<TextArea name="answer" toName="item" rows="3" maxSubmissions="1" required="true"/>'
            if self.form == "open"
            else '<Choices name="answer" toName="item" value="$options" choice="single-radio" required="true"/>'
        )
        return f'<View><HyperText name="item" value="$item"/>{control}</View>'

    def controls(self) -> dict[str, Control]:
        if self.form == "open":
            return {"answer": Control("textarea", required=True)}
        return {"answer": Control("choices", required=True, from_options=True)}

    def tasks(self, connection: Connection) -> list[TaskSpec]:
        specs = []
        for item_id in self.campaign.items:
            item = self.items[item_id]
            parts = []
            if item.image:
                parts.append(image_html(connection, self.blobs[item.image], 640))
            if item.audio:
                parts.append(audio_html(connection, self.blobs[item.audio]))
            if item.context:
                parts.append(f"<p>{html.escape(item.context)}</p>")
            parts.append(f"<p><b>{html.escape(item.question)}</b></p>")
            data: dict[str, Any] = {"item": "".join(parts)}
            if self.form == "standard":
                data["options"] = [
                    {"value": k, "html": f"<b>{k}</b>&nbsp;{html.escape(v)}"} for k, v in item.options.items()
                ]
            specs.append(
                TaskSpec(
                    ref=f"baseline|{self.name}|{self.form}|{item_id}|{item.content_hash[:16]}",
                    subject=f"item:{item_id}",
                    inputs_hash=item.content_hash,
                    data=data,
                    media=tuple(self.blobs[x] for x in (item.image, item.audio) if x),
                )
            )
        return specs

    def load(self) -> None:
        with self.ws.session() as s:
            self.answered = {(a.item_id, a.rater) for a in answers_of(s, self.name) if a.form == "open"}

    def locate(self, seen: Seen) -> str:
        return "" if seen.subject.removeprefix("item:") in self.items else UNKNOWN_TASK

    def admit(self, seen: Seen) -> Hashable:
        return (seen.subject.removeprefix("item:"), seen.person)

    def guard(self, seen: Seen) -> str | None:
        item_id = seen.subject.removeprefix("item:")
        if seen.person not in self.assigned.get(item_id, []):
            return f"{seen.person!r} is not a rater of {item_id!r} in baseline {self.name!r}"
        if self.form == "standard" and (item_id, seen.person) not in self.answered:
            return f"{seen.person!r} has no open-ended answer to {item_id!r} yet: the open form comes first"
        return None

    def options(self, seen: Seen) -> list[str]:
        item = self.items.get(seen.subject.removeprefix("item:"))
        return list(item.options) if item else []

    def new_report(self, project: LsProject) -> RatingPull:
        return RatingPull(about={"baseline": self.name, "form": self.form}, label=f"baseline {self.name} ({self.form})")

    def refusal(self, outcome: AnnotationOutcome) -> dict[str, Any]:
        return {
            "annotation": outcome.annotation,
            "item": outcome.subject,
            "user": outcome.user,
            "reason": outcome.reason,
        }

    def record(self, ws: Workspace, pulled: Pulled, report: PullCounts) -> list[AnnotationOutcome]:
        outcomes = []
        for (item_id, rater), vote in sorted(pulled.votes.items()):  # type: ignore[misc]
            answer = vote.values or {}
            value = answer.get("answer")
            text = value[0] if isinstance(value, list) else str(value or "")
            try:
                added = record_answer(ws, self.name, item_id, rater, self.form, text, source="labelstudio")
            except CurateError as exc:
                outcomes.append(vote.seen.outcome("refused", str(exc)))
                continue
            if added:
                report.recorded += 1
            else:
                report.unchanged += 1
            outcomes.append(vote.seen.outcome("recorded"))
        return outcomes


def push_baseline(ws: Workspace, connection: Connection, name: str, recreate: bool = False) -> list[PushReport]:
    """Push both forms' projects."""
    return [push(ws, connection, BaselineProject(ws, name, form), recreate) for form in FORMS]


def pull_baseline(ws: Workspace, connection: Connection, name: str) -> list[PullCounts]:
    """Pull the open-ended project, then the Standard one (which needs the open answers recorded)."""
    return [pull(ws, connection, [BaselineProject(ws, name, form)])[0] for form in FORMS]
