"""One engine for every kind of Label Studio project; a project kind is a declaration on it.

A kind (:class:`ProjectKind`) declares what it asks (a labeling config and its controls' value rules), what it
shows (its tasks), who may answer (roles), its own trust checks, and how the deciding annotation of a person
becomes a record of the workspace. The engine owns the rest, the same for every kind: connection, project
creation and push, pull (the export read whole; per person and subject, the latest annotation that is not a
skip decides; each annotation's outcome remembered, so a second pull changes nothing), the checks every kind
shares, and the report.

Every annotation meets the checks in this order, whatever the kind:
1. the task was pushed by this workspace with its ref intact, the annotation counts only for whoever submitted
   it, and that e-mail is a person of the workspace (:func:`~.pulling.read_export`);
2. the subject still exists (the kind's :meth:`~ProjectKind.locate`);
3. the person holds one of the kind's roles (the entitlement every kind declares);
4. the kind's admission — authorship, a changed subject — which also names the vote's slot (:meth:`~ProjectKind.admit`);
5. a skip is kept as a skip;
6. the kind's guard (separation of roles, exposure);
7. the task's data is what was pushed (an annotation made on data changed on the server is refused);
8. every value is one the labeling config allows (the server checks nothing);
9. the kind's own check of the values (the record's rules).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

from sqlalchemy import select

from curation.tables import Person
from curation.workspace import Workspace

from .connection import Connection, Server
from .projects import TAMPERED, AnnotationOutcome, export_tasks, known_project, users_by_id
from .pulling import PullCounts, Seen, Verdict, decide, read_export, reopen_tasks, store_outcomes
from .pushing import PushReport, TaskSpec, push_tasks
from .results import Control, ResultRefused, bind_controls, read_result
from .tables import LsProject


@dataclass
class Pulled:
    """What a kind's :meth:`~ProjectKind.record` is handed: each slot's deciding vote, and what the pull saw."""

    project: LsProject
    verdicts: list[Verdict]
    votes: dict[Hashable, Verdict]
    skips: dict[Hashable, Verdict]
    """The latest skip of each slot that has no other annotation."""
    deleted: list[AnnotationOutcome]


class ProjectKind(ABC):
    """A kind of Label Studio project, declared; one instance per project, built from the workspace."""

    key: str
    """The project's key in this workspace (``stage:grammar``, ``campaign:NAME``...)."""
    title: str
    quorum: int
    """How many people's annotations each task asks for."""
    push_hint: str
    """What to do when pulling a project that was never pushed."""
    roles: ClassVar[frozenset[str]] = frozenset()
    """The roles an annotator needs (one of them); empty: any person of the workspace."""
    annotator: ClassVar[str] = "person"
    """What the kind calls an annotator, for messages."""
    events: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """Annotation outcomes also written to the event log, and the event's action."""
    in_order: bool = False
    """Annotators must meet the tasks in push order (see :func:`~.pushing.maximum_annotations`)."""

    def instruction(self) -> str | None:
        """The project's instructions (HTML), shown before annotating; None: none."""
        return None

    @abstractmethod
    def label_config(self) -> str: ...

    @abstractmethod
    def controls(self) -> dict[str, Control]:
        """The value rules of every control of the labeling config (names and types must match it)."""

    @abstractmethod
    def tasks(self, connection: Connection) -> list[TaskSpec]:
        """The tasks the workspace wants on the server now, in the order annotators should meet them."""

    def load(self) -> None:
        """Read what judging the annotations needs, just before this project's pull (after earlier ones)."""
        return None

    def locate(self, seen: Seen) -> str:
        """Why the annotation's subject is gone from the workspace; "" when it is there."""
        return ""

    @abstractmethod
    def admit(self, seen: Seen) -> Hashable | Verdict:
        """The vote's slot (whose vote on what), or the verdict when the kind's own rules stop it here."""

    def guard(self, seen: Seen) -> str | None:
        """Why the person may not annotate this subject (separation, exposure); None when they may."""
        return None

    def options(self, seen: Seen) -> Sequence[str]:
        """The allowed values of controls whose choices come from the task (``from_options``)."""
        return ()

    def accept(self, seen: Seen, values: dict[str, Any]) -> dict[str, Any] | str:
        """The vote's values as the kind records them, or why the record they make is refused."""
        return values

    @abstractmethod
    def new_report(self, project: LsProject) -> PullCounts: ...

    @abstractmethod
    def record(self, ws: Workspace, pulled: Pulled, report: PullCounts) -> list[AnnotationOutcome]:
        """Record the deciding votes, fill the report's record counts; the outcome of each vote's annotation."""

    @abstractmethod
    def refusal(self, outcome: AnnotationOutcome) -> Any:
        """A refused annotation as the report lists it."""


def push(ws: Workspace, connection: Connection, kind: ProjectKind, recreate: bool = False) -> PushReport:
    """Create or update the kind's project and bring its tasks in line with what the workspace wants shown."""
    connection.media_dir()  # refuse early when no document root is configured
    wanted = kind.tasks(connection)
    return push_tasks(
        ws,
        connection,
        kind.key,
        kind.title,
        kind.label_config(),
        kind.quorum,
        wanted,
        recreate,
        in_order=kind.in_order,
        instruction=kind.instruction(),
    )


def pull(ws: Workspace, connection: Connection, kinds: Sequence[ProjectKind]) -> list[PullCounts]:
    """Pull several projects; every one is found on the server and exported before anything is recorded."""
    projects = [(kind, known_project(ws, kind.key, kind.push_hint)) for kind in kinds]
    server = Server(connection)
    exports = [(kind, project, export_tasks(server, project)) for kind, project in projects]
    users = users_by_id(server)
    return [_pull_one(ws, server, kind, project, tasks, users) for kind, project, tasks in exports]


def _pull_one(
    ws: Workspace,
    server: Server,
    kind: ProjectKind,
    project: LsProject,
    tasks: list[dict[str, Any]],
    users: dict[int, str],
) -> PullCounts:
    report = kind.new_report(project)
    with ws.session() as s:
        people = {p.name: p for p in s.execute(select(Person)).scalars()}
    emails = {(p.email or "").strip().lower(): p.name for p in people.values() if p.email}
    seen, deleted = read_export(ws, kind.key, tasks, users, emails)
    report.annotations = len(seen)
    kind.load()
    rules = bind_controls(kind.label_config(), kind.controls())
    verdicts = [_judge(kind, rules, people, x) for x in seen]
    votes, superseded, skips = decide(verdicts)
    outcomes = [v.seen.outcome(v.outcome, v.reason) for v in verdicts if v.outcome in ("skipped", "refused", "retired")]
    outcomes += [
        v.seen.outcome("superseded", f"a later annotation by the same {kind.annotator} replaces it") for v in superseded
    ]
    outcomes += kind.record(ws, Pulled(project, verdicts, votes, skips, deleted), report)
    store_outcomes(ws, kind.key, outcomes + deleted, kind.events)
    refused = [o for o in outcomes if o.outcome == "refused"]
    report.reopened = reopen_tasks(ws, server, project, kind.quorum, tasks, {o.annotation for o in refused})
    report.skipped = sum(1 for o in outcomes if o.outcome == "skipped")
    report.superseded = len(superseded)
    report.deleted = len(deleted)
    report.refused = [kind.refusal(o) for o in refused]
    return report


def _judge(kind: ProjectKind, rules: dict[str, Control], people: Mapping[str, Person], seen: Seen) -> Verdict:
    """What one annotation is — a vote, a skip, a refusal with its reason, retired — by the checks in order."""
    if seen.refusal:
        return Verdict(seen, "refused", reason=seen.refusal)
    missing = kind.locate(seen)
    if missing:
        return Verdict(seen, "refused", reason=missing)
    assert seen.person is not None, "read_export refuses an annotation by nobody of the workspace"
    if kind.roles and not kind.roles & people[seen.person].role_set:
        wanted = " or ".join(sorted(kind.roles))
        return Verdict(seen, "refused", reason=f"{seen.person!r} ({seen.email}) does not have the {wanted} role")
    admitted = kind.admit(seen)
    if isinstance(admitted, Verdict):
        return admitted
    slot = admitted
    if seen.skipped:
        return Verdict(seen, "skipped", slot)
    refusal = kind.guard(seen)
    if refusal is not None:
        return Verdict(seen, "refused", slot, reason=refusal)
    if seen.tampered:
        return Verdict(seen, "refused", slot, reason=TAMPERED)
    try:
        values = read_result(seen.result, rules, kind.options(seen))
    except ResultRefused as exc:
        return Verdict(seen, "refused", slot, reason=str(exc))
    accepted = kind.accept(seen, values)
    if isinstance(accepted, str):
        return Verdict(seen, "refused", slot, reason=accepted)
    return Verdict(seen, "vote", slot, accepted)
