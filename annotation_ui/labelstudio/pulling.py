"""Reading a pulled project, shared by review stages and rating campaigns: whose annotation, on which task,
whether it can count at all, and which of a person's annotations decides their vote.

Rules, whatever the project:
- an annotation counts only for the person who submitted it (``updated_by`` must be ``completed_by``);
- an annotation on a task this workspace did not push, or on a task whose data was changed on the server,
  is refused (the second stays refused until it is edited, even after the task is restored);
- per person and subject (and view), the latest annotation that is not a skip decides: when it is refused,
  the person has no vote there, and an earlier record made from it is withdrawn; a skip never replaces a vote;
- an annotation deleted on the server is noted once, and what it recorded is withdrawn by the caller;
- after a pull, each task asks Label Studio for one more annotator per annotator whose annotations were all
  refused, so that refusals do not starve a task.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from curation.workspace import Workspace, record_event

from .connection import Server
from .projects import (
    REF_KEY,
    TAMPERED,
    UNKNOWN_TASK,
    AnnotationOutcome,
    annotator_email,
    attribution_problem,
    data_hash,
    mark_annotation,
    no_person,
    set_overlap,
    wanted_overlap,
)
from .tables import LsAnnotation, LsProject, LsTask

DELETED = "deleted on the server"
"""The reason kept for an annotation that was pulled once and is gone from the server now."""


@dataclass
class Seen:
    """One exported annotation: who it is credited to, on which task, and anything that stops it counting."""

    annotation: int
    task: int
    row: LsTask | None
    subject: str
    email: str
    user: str
    person: str | None
    updated_at: str
    skipped: bool
    result: Any
    refusal: str
    """Why it can be nobody's vote (unknown task, forged attribution, unknown person); "" otherwise."""
    tampered: bool
    """The task showed other data than was pushed when it was made: the person's vote, refused."""
    previous: str | None
    """Its outcome at the last pull when it has not changed since (same ``updated_at``), else None."""

    def outcome(self, outcome: str, reason: str = "") -> AnnotationOutcome:
        return AnnotationOutcome(
            self.annotation, self.task, self.subject, self.user, self.person, outcome, reason, self.updated_at
        )


@dataclass
class Verdict:
    """What a stage or campaign made of one annotation: a vote (``values``), a skip, a refusal, a retirement."""

    seen: Seen
    outcome: str
    """``vote``, ``skipped``, ``refused`` or ``retired``."""
    slot: Hashable | None = None
    """Whose vote on what (person, subject, view...); None when the annotation can be nobody's vote."""
    values: dict[str, Any] | None = None
    reason: str = ""


SHOWN = ("annotations", "recorded", "replaced", "unchanged", "withdrawn", "skipped", "refused")
"""The figures of :meth:`PullCounts.counts`."""


@dataclass(kw_only=True)
class PullCounts:
    """What one pull of a project did with the annotations it read; a kind's report adds its own figures."""

    annotations: int = 0
    recorded: int = 0
    replaced: int = 0
    unchanged: int = 0
    withdrawn: int = 0
    skipped: int = 0
    superseded: int = 0
    deleted: int = 0
    reopened: int = 0
    """Tasks offered again after refusals."""
    refused: list[Any] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        """The figures every report's JSON shows, in this order."""
        return {name: getattr(self, name) for name in SHOWN}

    def as_json(self) -> dict[str, Any]:
        return self.counts()

    def summary(self) -> str:
        return self.counts_in_words()

    def counts_in_words(self) -> str:
        return (
            f"{self.annotations} annotation(s) — {self.recorded} recorded, {self.replaced} replaced, "
            f"{self.unchanged} unchanged, {self.withdrawn} withdrawn, {self.skipped} skip(s), "
            f"{len(self.refused)} refused"
        )


@dataclass(kw_only=True)
class RatingPull(PullCounts):
    """A pull's report as campaigns, judge samples and query screening give it: what was pulled, then the counts."""

    about: dict[str, str]
    """What was pulled (``{"campaign": NAME}``...), leading the JSON document."""
    label: str
    """What was pulled, in words, leading the summary line."""

    def as_json(self) -> dict[str, Any]:
        return {**self.about, **self.counts()}

    def summary(self) -> str:
        return f"{self.label}: {self.counts_in_words()}"


def read_export(
    ws: Workspace, key: str, tasks: list[dict[str, Any]], users: dict[int, str], people: Mapping[str, str]
) -> tuple[list[Seen], list[AnnotationOutcome]]:
    """Every annotation of the export with who made it and on what, and the annotations deleted since last time.

    ``people`` maps a lower-case e-mail to a person's name.
    """
    with ws.session() as s:
        local = {r.task_id: r for r in s.execute(select(LsTask).where(LsTask.project_key == key)).scalars()}
        before = {
            r.annotation_id: r for r in s.execute(select(LsAnnotation).where(LsAnnotation.project_key == key)).scalars()
        }
    seen: list[Seen] = []
    for task in tasks:
        task_id = int(task["id"])
        row = local.get(task_id)
        data = task.get("data") or {}
        known = row is not None and data.get(REF_KEY) == row.ref
        tampered = known and row is not None and row.data_hash is not None and data_hash(data) != row.data_hash
        subject = row.subject if row else str(data.get(REF_KEY, "?"))
        for ann in task.get("annotations") or []:
            email, user = annotator_email(ann, users)
            updated = str(ann.get("updated_at") or ann.get("created_at") or "")
            prior = before.get(int(ann["id"]))
            unchanged = prior is not None and prior.annotation_updated_at == updated
            person = people.get(email)
            refusal = UNKNOWN_TASK if not known else attribution_problem(ann, users)
            if not refusal and person is None:
                refusal = no_person(email)
            sticky = unchanged and prior is not None and prior.reason == TAMPERED
            seen.append(
                Seen(
                    annotation=int(ann["id"]),
                    task=task_id,
                    row=row if known else None,
                    subject=subject,
                    email=email,
                    user=user,
                    person=person,
                    updated_at=updated,
                    skipped=bool(ann.get("was_cancelled")),
                    result=ann.get("result") or [],
                    refusal=refusal,
                    tampered=bool(tampered or sticky),
                    previous=prior.outcome if unchanged and prior is not None else None,
                )
            )
    present = {x.annotation for x in seen}
    deleted = [
        AnnotationOutcome(r.annotation_id, r.task_id, r.subject, r.ls_user, r.person, "deleted", DELETED, "")
        for r in before.values()
        if r.annotation_id not in present and r.outcome != "deleted"
    ]
    return seen, deleted


def decide(verdicts: list[Verdict]) -> tuple[dict[Hashable, Verdict], list[Verdict], dict[Hashable, Verdict]]:
    """(votes, superseded, skips): per slot, the latest annotation that is not a skip decides.

    ``votes`` holds the slots whose deciding annotation is acceptable; a slot whose latest annotation was
    refused has no vote. ``skips`` holds the latest skip of slots that have no other annotation at all.
    """
    by_slot: dict[Hashable, list[Verdict]] = defaultdict(list)
    skips: dict[Hashable, Verdict] = {}
    for v in sorted(verdicts, key=lambda v: (v.seen.updated_at, v.seen.annotation)):
        if v.slot is None:
            continue
        if v.outcome == "skipped":
            skips[v.slot] = v
        elif v.outcome in ("vote", "refused"):
            by_slot[v.slot].append(v)
    votes: dict[Hashable, Verdict] = {}
    superseded: list[Verdict] = []
    for slot, vs in by_slot.items():
        *earlier, last = vs
        superseded += [v for v in earlier if v.outcome == "vote"]
        if last.outcome == "vote":
            votes[slot] = last
    return votes, superseded, {slot: v for slot, v in skips.items() if slot not in by_slot}


def store_outcomes(ws: Workspace, key: str, outcomes: list[AnnotationOutcome], events: Mapping[str, str]) -> None:
    """Remember each annotation's outcome; a new outcome named in ``events`` (e.g. refused) is also an event."""
    with ws.writing() as s:
        existing = {
            r.annotation_id: r for r in s.execute(select(LsAnnotation).where(LsAnnotation.project_key == key)).scalars()
        }
        for o in outcomes:
            row = existing.get(o.annotation)
            if row is not None and (row.outcome, row.reason, row.annotation_updated_at) == (
                o.outcome,
                o.reason,
                o.updated_at or row.annotation_updated_at,
            ):
                continue
            if o.outcome == "deleted" and row is not None:
                o.updated_at = row.annotation_updated_at
            row = mark_annotation(s, key, row, o)
            row.subject, row.ls_user, row.task_id = o.subject, o.user, o.task
            action = events.get(o.outcome)
            if action:
                record_event(
                    s,
                    o.person or o.user,
                    action,
                    o.subject,
                    None,
                    {
                        "source": "labelstudio",
                        "project": key,
                        "annotation": o.annotation,
                        "task": o.task,
                        "reason": o.reason,
                    },
                )


def reopen_tasks(
    ws: Workspace, server: Server, project: LsProject, quorum: int, tasks: list[dict[str, Any]], refused: set[int]
) -> int:
    """Give each open task one more share per annotator whose annotations on it were all refused; returns how many changed."""
    with ws.session() as s:
        local = {
            r.task_id: r
            for r in s.execute(
                select(LsTask).where(LsTask.project_key == project.key, LsTask.state == "active")
            ).scalars()
        }
    changed: dict[int, int] = {}
    for task in tasks:
        row = local.get(int(task["id"]))
        if row is None:
            continue
        overlap, labeled = wanted_overlap(quorum, task.get("annotations") or [], refused)
        if overlap != row.overlap:
            set_overlap(server, project.project_id, row.task_id, overlap, labeled)
            changed[row.task_id] = overlap
    if changed:
        with ws.writing() as s:
            for row in s.execute(
                select(LsTask).where(LsTask.project_key == project.key, LsTask.task_id.in_(sorted(changed)))
            ).scalars():
                row.overlap = changed[row.task_id]
                s.add(row)
    return len(changed)
