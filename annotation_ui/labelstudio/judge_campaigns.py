"""Judge Anything's score and pair samples as Label Studio campaigns (Judge Anything §2.3, "the same
campaigns stay available through Label Studio").

One project per sample kind (``judge:score``, ``judge:pair``), one task per sample still short of its
annotators; each task shows the task's instruction and inputs, the response (or the first and second
responses, in the recorded order) and the curated checklist, and asks for the overall criterion and the six
rubrics: 1–5 ratings for a score sample, first / second / tie for a pair. The project's overlap is the
configured number of annotators per sample.

A pull validates every annotation against the controls (nothing the server returns is trusted), then hands
the deciding annotation of each (sample, person) to the kind's own Apply path
(:func:`curation.kinds.judge.annotation_store.apply_external`): the same records, checks and separation as the
Streamlit pages — a person never annotates a sample twice (a sample they applied in the app is refused
here), never a sample of a task they imported, and a sample that already has its annotators takes nobody more.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Hashable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from sqlalchemy import select

from curation.errors import Problem, ValidationFailed
from curation.kinds.judge import annotation_store, record_store, sample_store, task_store
from curation.kinds.judge.rubrics import CHOICES, CRITERIA, DEFINITIONS, SCORE_MAX
from curation.kinds.judge.schema import ChecklistEntry, PairSample, ScoreSample
from curation.kinds.judge.tables import JudgeResponse, JudgeSample, JudgeTask
from curation.tables import Asset
from curation.workspace import Workspace

from .connection import Connection
from .engine import ProjectKind, Pulled, pull, push
from .media import medium_html
from .projects import UNKNOWN_TASK, AnnotationOutcome, instructions
from .pulling import PullCounts, RatingPull, Seen
from .pushing import PushReport, TaskSpec
from .results import Control
from .tables import LsAnnotation, LsProject

SAMPLE_KINDS = ("score", "pair")


def project_key(kind: str) -> str:
    return f"judge:{kind}"


def _check_kind(kind: str) -> None:
    if kind not in SAMPLE_KINDS:
        raise ValidationFailed([Problem(f"unknown sample kind {kind!r}; use score or pair", "kind")])


def label_config(kind: str) -> str:
    """Overall and the six rubrics: a 1–5 rating each (score) or a first / second / tie choice each (pair)."""
    head = (
        '<View><Header value="Task"/><HyperText name="task" value="$task"/>'
        '<Header value="Checklist (what a good response does)" size="5"/><HyperText name="checklist" value="$checklist"/>'
    )
    if kind == "score":
        shown = '<Header value="Response" size="4"/><HyperText name="response" value="$response"/>'
        controls = "".join(
            f'<Header value="{html.escape(c)} (1–{SCORE_MAX}): {html.escape(DEFINITIONS[c])}" size="6"/>'
            f'<Rating name="{c}" toName="response" maxRating="{SCORE_MAX}" required="true"/>'
            for c in CRITERIA
        )
        return f"{head}{shown}{controls}</View>"
    shown = (
        '<View style="display:flex;gap:1em">'
        '<View style="flex:1"><Header value="First response" size="4"/><HyperText name="first" value="$first"/></View>'
        '<View style="flex:1"><Header value="Second response" size="4"/><HyperText name="second" value="$second"/></View>'
        "</View>"
    )
    controls = "".join(
        f'<Header value="{html.escape(c)}: {html.escape(DEFINITIONS[c])}" size="6"/>'
        f'<Choices name="{c}" toName="first" choice="single-radio" required="true" showInline="true">'
        + "".join(f'<Choice value="{x}"/>' for x in CHOICES)
        + "</Choices>"
        for c in CRITERIA
    )
    return f"{head}{shown}{controls}</View>"


def controls(kind: str) -> dict[str, Control]:
    if kind == "score":
        return {c: Control("rating", required=True, max_rating=SCORE_MAX) for c in CRITERIA}
    return {c: Control("choices", required=True, choices=CHOICES) for c in CRITERIA}


# ----- push ---------------------------------------------------------------------------------------
@dataclass
class _Shown:
    """What the tasks of one push show: tasks, responses, checklists and the blob name of each asset."""

    tasks: dict[str, JudgeTask]
    responses: dict[str, JudgeResponse]
    checklists: dict[str, list[ChecklistEntry]]
    blobs: dict[str, str]


def _shown(ws: Workspace) -> _Shown:
    with ws.session() as s:
        blobs = {sha: f"{sha}{ext}" for sha, ext in s.execute(select(Asset.sha256, Asset.ext)).all()}
    return _Shown(
        tasks={t.id: t for t in task_store.tasks(ws)},
        responses={r.id: r for r in task_store.responses(ws)},
        checklists={c.task: c.final for c in record_store.task_checklists(ws) if c.state == "final"},
        blobs=blobs,
    )


def _task_html(connection: Connection, shown: _Shown, task: JudgeTask) -> tuple[str, list[str]]:
    parts = [f"<p style='white-space:pre-wrap'>{html.escape(task.instruction)}</p>"]
    media = []
    for modality, sha in sorted(task.inputs.items()):
        blob = shown.blobs[sha]
        parts.append(medium_html(connection, modality, blob))
        media.append(blob)
    return "".join(parts), media


def _response_html(connection: Connection, shown: _Shown, response: JudgeResponse) -> tuple[str, list[str]]:
    if response.asset:
        blob = shown.blobs[response.asset]
        return medium_html(connection, response.modality, blob), [blob]
    return f"<p style='white-space:pre-wrap'>{html.escape(response.text or '')}</p>", []


def _checklist_html(entries: list[ChecklistEntry]) -> str:
    rows = "".join(f"<li><b>{html.escape(e.rubric)}</b>: {html.escape(e.text)}</li>" for e in entries)
    return f"<ul>{rows}</ul>" if rows else "<p>(no checklist)</p>"


def wanted_tasks(ws: Workspace, connection: Connection, kind: str) -> list[TaskSpec]:
    """One task per sample of the kind still short of its annotators; the data names no system."""
    quota = ws.settings.judge.annotators_per_sample
    shown = _shown(ws)
    with ws.session() as s:
        rows = list(
            s.execute(
                select(JudgeSample)
                .where(JudgeSample.kind == kind, JudgeSample.applied < quota)
                .order_by(JudgeSample.position)
            ).scalars()
        )
    specs = []
    for row in rows:
        task = shown.tasks[row.task]
        task_html, media = _task_html(connection, shown, task)
        data: dict[str, Any] = {"task": task_html, "checklist": _checklist_html(shown.checklists.get(task.id, []))}
        if kind == "score":
            sample = ScoreSample.model_validate(row.payload)
            data["response"], more = _response_html(connection, shown, shown.responses[sample.response])
            shown_responses = [sample.response]
        else:
            pair = PairSample.model_validate(row.payload)
            data["first"], first_media = _response_html(connection, shown, shown.responses[pair.first])
            data["second"], second_media = _response_html(connection, shown, shown.responses[pair.second])
            more = first_media + second_media
            shown_responses = [pair.first, pair.second]
        inputs = hashlib.sha256(
            repr(
                (task.content_hash, [shown.responses[r].content_hash for r in shown_responses], data["checklist"])
            ).encode()
        ).hexdigest()
        specs.append(
            TaskSpec(
                ref=f"judge|{kind}|{hashlib.sha256(row.id.encode()).hexdigest()[:24]}",  # sample ids name systems
                subject=row.id,
                inputs_hash=inputs,
                data=data,
                media=tuple(dict.fromkeys(media + more)),
            )
        )
    return specs


class JudgeSampleProject(ProjectKind):
    """One sample kind's project: one task per sample short of its annotators; a vote is handed to the kind's
    own Apply path, which refuses what the app refuses (a second annotation, a task one imported, a full sample)."""

    events = MappingProxyType({"refused": "labelstudio.annotation_refused"})

    def __init__(self, ws: Workspace, kind: str) -> None:
        _check_kind(kind)
        self.ws, self.kind = ws, kind
        self.key = project_key(kind)
        self.title = f"{ws.root.name}: judge {kind} samples"
        self.quorum = ws.settings.judge.annotators_per_sample
        self.push_hint = f"run `curate judge ls push {kind}` first"
        self.samples: set[str] = set()

    def instruction(self) -> str | None:
        return instructions(self.ws, self.kind)

    def label_config(self) -> str:
        return label_config(self.kind)

    def controls(self) -> dict[str, Control]:
        return controls(self.kind)

    def tasks(self, connection: Connection) -> list[TaskSpec]:
        return wanted_tasks(self.ws, connection, self.kind)

    def load(self) -> None:
        self.samples = {s.id for s in sample_store.samples(self.ws, self.kind)}

    def locate(self, seen: Seen) -> str:
        return "" if seen.row is not None and seen.row.subject in self.samples else UNKNOWN_TASK

    def admit(self, seen: Seen) -> Hashable:
        assert seen.row is not None
        return (seen.row.subject, seen.person)

    def accept(self, seen: Seen, values: dict[str, Any]) -> dict[str, Any]:
        return {c: v[0] if isinstance(v, list) else v for c, v in values.items()}

    def new_report(self, project: LsProject) -> RatingPull:
        return RatingPull(about={"kind": self.kind}, label=f"judge {self.kind} samples")

    def refusal(self, outcome: AnnotationOutcome) -> dict[str, Any]:
        return {
            "annotation": outcome.annotation,
            "task": outcome.task,
            "sample": outcome.subject,
            "user": outcome.user,
            "reason": outcome.reason,
        }

    def record(self, ws: Workspace, pulled: Pulled, report: PullCounts) -> list[AnnotationOutcome]:
        """Apply each person's deciding annotation in time order; what Apply refuses is refused here."""
        with ws.session() as s:
            owned = {
                (r.subject, r.person)
                for r in s.execute(
                    select(LsAnnotation).where(LsAnnotation.project_key == self.key, LsAnnotation.outcome == "recorded")
                ).scalars()
                if r.person
            }
        ordered = sorted(pulled.votes.values(), key=lambda v: (v.seen.updated_at, v.seen.annotation))
        external = [
            annotation_store.ExternalAnnotation(
                sample=v.slot[0],  # type: ignore[index]
                person=v.slot[1],  # type: ignore[index]
                values=v.values or {},
                source=f"labelstudio {self.key} annotation {v.seen.annotation}",
            )
            for v in ordered
        ]
        applied = annotation_store.apply_external(ws, external, owned, owned - set(pulled.votes))  # type: ignore[arg-type]
        refused_here = {(a.sample, a.person): reason for a, reason in applied.refused}
        report.recorded, report.replaced = len(applied.recorded), len(applied.replaced)
        report.unchanged, report.withdrawn = len(applied.unchanged), len(applied.withdrawn)
        outcomes = []
        for v in ordered:
            reason = refused_here.get(v.slot)  # type: ignore[arg-type]
            outcomes.append(v.seen.outcome("refused", reason) if reason else v.seen.outcome("recorded"))
        return outcomes


def push_judge(ws: Workspace, connection: Connection, kind: str, recreate: bool = False) -> PushReport:
    """Create or update the kind's project; samples that got their annotators meanwhile are closed there."""
    return push(ws, connection, JudgeSampleProject(ws, kind), recreate)


def pull_judge(ws: Workspace, connection: Connection, kind: str) -> PullCounts:
    """Validate every annotation, then apply each person's deciding one through the app's Apply checks."""
    (report,) = pull(ws, connection, [JudgeSampleProject(ws, kind)])
    return report
