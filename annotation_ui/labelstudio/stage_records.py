"""What a pull of a review stage's project records: review records from each reviewer's deciding annotations,
through ``curation.reviews.record_reviews`` — the code path of ``curate import reviews`` — (story ``revise``
edits as new revisions of their items), and the withdrawal of records no annotation backs any more.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select

from curation.errors import Problem, ValidationFailed
from curation.kinds import GroupStage, Stage
from curation.reviews import PendingReview, ReviewReport, StageGuard, Withdrawal, record_reviews, withdraw_reviews
from curation.screening.items import revise_items
from curation.screening.revise import ReviseRecord
from curation.workflow import ItemFacts
from curation.workspace import Workspace

from .engine import Pulled
from .projects import AnnotationOutcome
from .pulling import PullCounts, Verdict
from .tables import LsAnnotation, LsTask

STALE = "stale: the item (or group) changed after this task was pushed; push again and review the new task"
RETIRED = "the item (or group) changed since; the record this annotation made stays with the earlier revision"


@dataclass
class Refusal:
    annotation: int
    task: int
    subject: str
    user: str
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {
            "annotation": self.annotation,
            "task": self.task,
            "subject": self.subject,
            "user": self.user,
            "reason": self.reason,
        }


@dataclass(kw_only=True)
class PullReport(PullCounts):
    """What a pull of a review stage did; ``refused`` lists each refusal as a :class:`Refusal`."""

    stage: str
    project_id: int = 0
    revised: int = 0
    """Annotations whose edits made a new revision of their item (story ``revise``), also counted as recorded."""
    incomplete: int = 0
    retired: int = 0

    def as_json(self) -> dict[str, Any]:
        figures = ("annotations", "recorded", "revised", "replaced", "unchanged", "withdrawn", "skipped", "incomplete")
        figures += ("superseded", "retired", "deleted", "reopened")
        return {
            "stage": self.stage,
            "project": self.project_id,
            **{name: getattr(self, name) for name in figures},
            "refused": [r.as_json() for r in self.refused],
        }

    def summary(self) -> str:
        return (
            f"{self.stage}: {self.annotations} annotation(s) — {self.recorded} recorded"
            + (f" ({self.revised} as new revisions of their items)" if self.revised else "")
            + f", {self.replaced} replaced, "
            f"{self.unchanged} unchanged, {self.withdrawn} withdrawn, {self.skipped} skipped, "
            f"{self.incomplete} waiting for the rest of a checklist, {len(self.refused)} refused"
            + (f", {self.retired} newly retired (the item changed)" if self.retired else "")
            + (f", {self.deleted} deleted on the server" if self.deleted else "")
            + (f"; {self.reopened} task(s) offered again after refusals" if self.reopened else "")
        )


@dataclass
class Candidate:
    annotation: int
    task: int
    updated_at: str
    subject: str
    user: str
    person: str
    view: str | None
    values: dict[str, Any]


@dataclass
class StageFacts:
    """What judging a stage's annotations needs of the workspace, loaded once per pull."""

    stage: Stage
    by_id: dict[str, ItemFacts]
    sisters: dict[str, list[ItemFacts]]
    perturbed: dict[str, str]
    guard: StageGuard
    """Separation of roles and exposure, asked per annotation so that one refusal does not stop the pull."""

    def current_inputs(self, subject: str) -> str | None:
        """The hash of what the stage judges of this subject now; None when it is gone."""
        kind, _, ident = subject.partition(":")
        if kind == "group":
            members = self.sisters.get(ident)
            assert isinstance(self.stage, GroupStage)
            return self.stage.group_inputs(self.perturbed.get(ident, ""), members) if members else None
        item = self.by_id.get(ident)
        return self.stage.inputs(item) if item else None


def record_problem(
    stage: Stage, item: ItemFacts | None, kind: str, ident: str, reviewer: str, values: dict[str, Any]
) -> str:
    """Why the record this annotation makes would be refused (its model's rules, the stage's own checks); ""
    when it is acceptable. Checked per annotation, so one bad annotation never stops a pull."""
    fields = stage.record_from_annotation(item, {None: values})
    if fields is None:
        return ""
    record = {"stage": stage.name, "reviewer": reviewer, "group" if kind == "group" else "item": ident, **fields}
    try:
        stage.record_model.model_validate(record)
    except ValidationError as exc:
        messages = []
        for e in exc.errors():
            where, message = ".".join(str(p) for p in e["loc"]), e["msg"].removeprefix("Value error, ")
            messages.append(f"{where}: {message}" if where else message)
        return "; ".join(messages)
    problems = stage.annotation_problems(item, fields) if item is not None else []
    return "; ".join(problems)


def _withdrawals(
    ws: Workspace,
    facts: StageFacts,
    key: str,
    recorded: list[Candidate],
    verdicts: list[Verdict],
    deleted: list[AnnotationOutcome],
) -> list[Withdrawal]:
    """Records an earlier pull made from annotations that no longer back them (deleted, refused, incomplete)."""
    with ws.session() as s:
        rows = s.execute(
            select(LsAnnotation.person, LsTask.subject, LsTask.inputs_hash)
            .join(LsTask, (LsTask.project_key == LsAnnotation.project_key) & (LsTask.task_id == LsAnnotation.task_id))
            .where(LsAnnotation.project_key == key, LsAnnotation.outcome == "recorded")
        ).all()
    backed_before = {
        (subject, person, inputs)
        for person, subject, inputs in rows
        if person and facts.current_inputs(subject) == inputs
    }
    backed_now = {(c.subject, c.person, facts.current_inputs(c.subject)) for c in recorded}
    why: dict[tuple[str, str], str] = {}
    for o in deleted:
        if o.person:
            why[(o.subject, o.person)] = f"its annotation {o.annotation} was deleted in Label Studio"
    for v in sorted(verdicts, key=lambda v: (v.seen.updated_at, v.seen.annotation)):
        if v.outcome == "refused" and v.slot is not None and v.seen.person:
            why[(v.seen.subject, v.seen.person)] = (
                f"its annotation {v.seen.annotation} was edited and refused: {v.reason}"
            )
    return [
        Withdrawal(
            subject,
            facts.stage.name,
            person,
            inputs,
            why.get((subject, person), "the reviewer's annotations in Label Studio no longer make a complete record"),
        )
        for subject, person, inputs in sorted(backed_before - backed_now)
    ]


def _records(
    stage: Stage, candidates: list[Candidate], by_id: dict[str, ItemFacts]
) -> tuple[list[PendingReview], dict[str, list[Candidate]]]:
    """Review records from each reviewer's deciding annotation per subject (and view); a per-view stage needs every
    view of the item."""
    done: dict[str, list[Candidate]] = {"recorded": [], "incomplete": []}
    pendings: list[PendingReview] = []
    by_reviewer: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    for c in candidates:
        by_reviewer[(c.subject, c.person)].append(c)
    for (subject, person), cs in sorted(by_reviewer.items()):
        kind, _, ident = subject.partition(":")
        record: dict[str, Any] = {
            "stage": stage.name,
            "reviewer": person,
            "group" if kind == "group" else "item": ident,
        }
        fields = stage.record_from_annotation(
            by_id.get(ident) if kind == "item" else None, {c.view: c.values for c in cs}
        )
        if fields is None:
            done["incomplete"].extend(cs)
            continue
        record.update(fields)
        try:
            review = stage.record_model.model_validate(record)
        except ValidationError as exc:  # read_result already checked every value; kept as a last guard
            raise ValidationFailed([Problem(str(exc), stage.name, cs[0].annotation)]) from exc
        # The annotation id stands in for the line number in any message record_reviews gives.
        pendings.append(PendingReview(cs[0].annotation, review))  # type: ignore[arg-type]
        done["recorded"].extend(cs)
    return pendings, done


def record_stage(ws: Workspace, facts: StageFacts, pulled: Pulled, report: PullReport) -> list[AnnotationOutcome]:
    """Record the deciding votes as review records (a per-view stage needs every view of the item), withdraw what
    no annotation backs any more, and count it all in the report."""
    project = pulled.project
    candidates = [
        Candidate(
            v.seen.annotation,
            v.seen.task,
            v.seen.updated_at,
            v.seen.subject,
            v.seen.user,
            v.seen.person or "",
            v.seen.row.view if v.seen.row else None,
            v.values or {},
        )
        for v in pulled.votes.values()
    ]
    pendings, done = _records(facts.stage, candidates, facts.by_id)
    outcomes: list[AnnotationOutcome] = []
    for outcome, reason, group in (
        ("incomplete", "waiting for the reviewer's other views of this item", done["incomplete"]),
        ("recorded", "", done["recorded"]),
    ):
        outcomes += [
            AnnotationOutcome(c.annotation, c.task, c.subject, c.user, c.person, outcome, reason, c.updated_at)
            for c in group
        ]
    revisions = [p for p in pendings if isinstance(p.review, ReviseRecord) and p.review.edits]
    where = f"Label Studio project {project.project_id} annotation"
    recorded = record_reviews(ws, [p for p in pendings if p not in revisions], where, source="labelstudio")
    if revisions:  # edits make new revisions of story items (and their editors' sign-offs)
        lines = [(p.line, p.review) for p in revisions]
        report.revised = len(revise_items(ws, lines, where, source="labelstudio").revised)  # type: ignore[arg-type]
    why = _withdrawals(ws, facts, project.key, done["recorded"], pulled.verdicts, pulled.deleted)
    report.withdrawn = withdraw_reviews(ws, why, "labelstudio")
    _count(report, recorded, outcomes)
    report.retired = sum(1 for v in pulled.verdicts if v.outcome == "retired" and v.seen.previous != "retired")
    return outcomes


def _count(report: PullReport, recorded: ReviewReport, outcomes: list[AnnotationOutcome]) -> None:
    report.recorded, report.replaced, report.unchanged = recorded.recorded, recorded.replaced, recorded.unchanged
    report.recorded += report.revised
    report.incomplete = sum(1 for o in outcomes if o.outcome == "incomplete")
