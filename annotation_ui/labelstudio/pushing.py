"""Pushing: a project's tasks on the server kept in step with what the workspace wants shown.

Every task carries a ``omnicurate_ref`` in its data: the stable key of what it shows (including the hash of
its inputs). Pushing compares refs, so a second push adds nothing, a crashed push is adopted rather than
duplicated, a changed item gets a new task, and a task nobody wants any more is deleted, or kept, closed to
annotation and marked retired when it already has annotations. A task whose data was changed on the server
is restored, and annotations made on the changed data are refused; each task's overlap is set here so that a
refused annotation does not use up a task's share and, where order matters, tasks are served in push order.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from curation.exposure import record_exposure
from curation.tables import Person, utcnow
from curation.workspace import Workspace, record_event

from .connection import Connection, Server
from .errors import LabelStudioRequestFailed
from .media import check_media, publish_media
from .projects import (
    REF_KEY,
    TAMPERED,
    AnnotationOutcome,
    data_hash,
    ensure_project,
    mark_annotation,
    server_tasks,
    set_overlap,
    user_id,
    users_by_id,
    wanted_overlap,
)
from .tables import LsAnnotation, LsTask


def maximum_annotations(quorum: int, in_order: bool) -> int:
    """Label Studio's own count per task: the quorum, or one when tasks must be served in task order.

    With a count above one Label Studio serves partly annotated tasks first, picked at random ("breadth
    first"); at one it serves tasks in id order. Each task's overlap is then set here to the quorum, one
    request per new task: the price of an ordered queue, paid only where order matters (the checklist).
    """
    return 1 if in_order else quorum


@dataclass(frozen=True)
class TaskSpec:
    """A task the workspace wants on the server."""

    ref: str
    subject: str
    inputs_hash: str
    data: dict[str, Any]
    view: str | None = None
    media: tuple[str, ...] = ()
    """Blob names (sha256 + extension) in the workspace media store that the task's data points at."""
    exposes: tuple[str, ...] = ()
    """Items whose labels the task shows: publishing it exposes every user of the server to them."""
    prefill: tuple[dict[str, Any], ...] = ()
    """Result regions imported with the task as a prediction, which Label Studio shows as the annotation's
    starting values (the story revise form starts from the current annotation)."""


@dataclass
class PushReport:
    project_id: int = 0
    created: int = 0
    kept: int = 0
    adopted: int = 0
    deleted: int = 0
    retired: int = 0
    reopened: int = 0
    restored: int = 0
    media_published: int = 0
    config_sent: bool = False
    exposures: int = 0
    warnings: list[str] = field(default_factory=list)
    active: dict[str, int] = field(default_factory=dict)
    """ref -> task id of every task now open on the server."""

    def as_json(self) -> dict[str, Any]:
        shown = {k: v for k, v in asdict(self).items() if k not in ("warnings", "active")}
        return {"project": shown.pop("project_id"), **shown}

    def summary(self) -> str:
        return (
            f"project {self.project_id}: {self.created} task(s) created, {self.kept} kept, {self.adopted} adopted, "
            f"{self.deleted} deleted, {self.retired} retired (annotated, kept and closed), {self.reopened} reopened, "
            f"{self.restored} restored (data changed on the server); {self.media_published} medium/media published"
            + (f"; {self.exposures} label exposure(s) recorded" if self.exposures else "")
        )


def task_data(spec: TaskSpec) -> dict[str, Any]:
    """The data a task is pushed with: what it shows, and its ref."""
    return {**spec.data, REF_KEY: spec.ref}


def task_payload(spec: TaskSpec) -> dict[str, Any]:
    """What a new task is imported as: its data, and its starting values as a prediction when it has any."""
    if not spec.prefill:
        return task_data(spec)
    return {"data": task_data(spec), "predictions": [{"model_version": "omnicurate", "result": list(spec.prefill)}]}


def refused_annotations(s: Session, key: str) -> set[int]:
    rows = s.execute(
        select(LsAnnotation.annotation_id).where(LsAnnotation.project_key == key, LsAnnotation.outcome == "refused")
    )
    return set(rows.scalars())


def sync_tasks(
    ws: Workspace, server: Server, key: str, project_id: int, wanted: list[TaskSpec], quorum: int, maximum: int
) -> PushReport:
    """Create missing tasks, restore changed ones, delete unwanted unannotated ones, retire (close) annotated ones."""
    report = PushReport(project_id=project_id)
    with ws.session() as s:
        local = {row.task_id: row for row in s.execute(select(LsTask).where(LsTask.project_key == key)).scalars()}
        refused = refused_annotations(s, key)
        accepted = {
            (r.annotation_id, r.annotation_updated_at)
            for r in s.execute(select(LsAnnotation).where(LsAnnotation.project_key == key)).scalars()
            if r.outcome != "refused"
        }
    on_server: dict[str, dict[str, Any]] = {}
    for task in server_tasks(server, project_id):
        ref = (task.get("data") or {}).get(REF_KEY)
        if isinstance(ref, str) and (ref not in on_server or int(task["id"]) in local):
            on_server[ref] = task
    specs = {spec.ref: spec for spec in wanted}
    to_create = [spec for spec in wanted if spec.ref not in on_server]
    report.media_published = publish_media(ws, server.connection, (b for spec in wanted for b in spec.media))
    created_ids: list[int] = []
    if to_create:
        response = server.call(
            f"importing {len(to_create)} task(s) into project {project_id}",
            server.client.projects.import_tasks,
            id=project_id,
            request=[task_payload(spec) for spec in to_create],
            return_task_ids=True,
        )
        created_ids = [int(i) for i in (response.task_ids or [])]
        if len(created_ids) != len(to_create):
            raise LabelStudioRequestFailed(
                f"project {project_id}: sent {len(to_create)} task(s) but the server reported {len(created_ids)} "
                "task id(s); push again (tasks already there are recognised by their ref and not duplicated)"
            )
    now = utcnow()
    tampered: list[tuple[dict[str, Any], TaskSpec]] = []
    overlaps: dict[int, tuple[int, bool]] = {}
    rows: list[LsTask] = []
    for spec, task_id in zip(to_create, created_ids, strict=True):
        rows.append(_row(key, task_id, spec))
        rows[-1].overlap = quorum
        if quorum != maximum:  # imported tasks get the project's count
            overlaps[task_id] = (quorum, False)
        report.active[spec.ref] = task_id
        report.created += 1
    for ref, task in on_server.items():
        task_id = int(task["id"])
        row = local.get(task_id)
        if ref not in specs:
            continue
        spec = specs[ref]
        server_hash, wanted_hash = data_hash(task.get("data")), data_hash(task_data(spec))
        if row is None:
            row = _row(key, task_id, spec)
            row.data_hash = server_hash
            report.adopted += 1
        else:
            report.kept += 1
        if row.state != "active":
            row.state, row.updated_at = "active", now
            report.reopened += 1
        if server_hash != (row.data_hash or server_hash):
            tampered.append((task, spec))
        elif server_hash != wanted_hash:  # this workspace renders the task differently now: not tampering
            _restore(server, project_id, task_id, spec)
        row.data_hash = wanted_hash
        rows.append(row)
        report.active[ref] = task_id
        overlap = wanted_overlap(quorum, task.get("annotations") or [], refused)
        if (task.get("overlap"), bool(task.get("is_labeled"))) != overlap:
            overlaps[task_id] = overlap
        row.overlap = overlap[0]
    to_close: list[dict[str, Any]] = []
    to_delete: list[dict[str, Any]] = []
    for ref, task in on_server.items():
        if ref in specs:
            continue
        annotated = (task.get("total_annotations") or 0) + (task.get("cancelled_annotations") or 0) > 0
        (to_close if annotated else to_delete).append(task)
    for task in to_delete:
        server.call(f"deleting task {task['id']} of project {project_id}", server.client.tasks.delete, str(task["id"]))
    for task in to_close:  # retired: kept for its annotations, and no longer served to anyone
        if (task.get("overlap"), bool(task.get("is_labeled"))) != (0, True):
            overlaps[int(task["id"])] = (0, True)
    for task, spec in tampered:
        _restore(server, project_id, int(task["id"]), spec)
    for task_id, (overlap, labeled) in sorted(overlaps.items()):
        set_overlap(server, project_id, task_id, overlap, labeled)
    with ws.writing() as s:
        for row in rows:
            s.merge(row)
        for state, tasks in (("deleted", to_delete), ("retired", to_close)):
            for task in tasks:
                row = local.get(int(task["id"]))
                if row is not None and row.state != state:
                    row.state, row.updated_at = state, now
                    row.overlap = 0 if state == "retired" else row.overlap
                    s.merge(row)
                    if state == "retired":
                        report.retired += 1
                if state == "deleted":
                    report.deleted += 1
        for task, spec in tampered:
            report.restored += 1
            record_event(
                s,
                "labelstudio",
                "labelstudio.task_restored",
                spec.subject,
                {"task": int(task["id"]), "data_hash": data_hash(task.get("data"))},
                {"task": int(task["id"]), "data_hash": data_hash(task_data(spec)), "project": key},
            )
            _refuse_made_on_changed_data(s, key, task, spec, accepted)
    return report


def _restore(server: Server, project_id: int, task_id: int, spec: TaskSpec) -> None:
    server.call(
        f"restoring the data of task {task_id} of project {project_id}",
        server.client.tasks.update,
        str(task_id),
        data=task_data(spec),
    )


def _refuse_made_on_changed_data(
    s: Session, key: str, task: dict[str, Any], spec: TaskSpec, accepted: set[tuple[int, str]]
) -> None:
    """Annotations on a task found changed that were not accepted before are refused, and stay so until edited."""
    existing = {
        r.annotation_id: r
        for r in s.execute(
            select(LsAnnotation).where(LsAnnotation.project_key == key, LsAnnotation.task_id == int(task["id"]))
        ).scalars()
    }
    for ann in task.get("annotations") or []:
        updated = str(ann.get("updated_at") or ann.get("created_at") or "")
        if (int(ann["id"]), updated) in accepted:
            continue
        who = user_id(ann.get("completed_by"))
        mark_annotation(
            s,
            key,
            existing.get(int(ann["id"])),
            AnnotationOutcome(
                int(ann["id"]), int(task["id"]), spec.subject, f"#{who}", None, "refused", TAMPERED, updated
            ),
        )


def push_tasks(
    ws: Workspace,
    connection: Connection,
    key: str,
    title: str,
    label_config: str,
    quorum: int,
    wanted: list[TaskSpec],
    recreate: bool = False,
    in_order: bool = False,
    instruction: str | None = None,
) -> PushReport:
    """Refuse before touching the server when a medium is missing, then bring the project and its tasks in line.

    ``in_order``: annotators must meet the tasks in the order of ``wanted`` (see :func:`maximum_annotations`).
    """
    check_media(ws, {blob: spec.subject for spec in wanted for blob in spec.media})
    server = Server(connection)
    maximum = maximum_annotations(quorum, in_order)
    project_id, config_sent = ensure_project(ws, server, key, title, label_config, maximum, recreate, instruction)
    report = sync_tasks(ws, server, key, project_id, wanted, quorum, maximum)
    report.config_sent = config_sent
    showing = [(report.active[spec.ref], spec) for spec in wanted if spec.exposes and spec.ref in report.active]
    if showing:
        report.exposures = record_exposures(ws, server, project_id, showing)
    return report


def record_exposures(ws: Workspace, server: Server, project_id: int, showing: list[tuple[int, TaskSpec]]) -> int:
    """Every user of the server can read every project on it: each person with a user there saw these labels.

    Done on every push, so that people who joined since are recorded too; an exposure already recorded is
    not recorded again.
    """
    emails = set(users_by_id(server).values()) - {""}
    with ws.writing() as s:
        people = [p.name for p in s.execute(select(Person)).scalars() if (p.email or "").strip().lower() in emails]
        added = 0
        for task_id, spec in showing:
            via = f"Label Studio {server.connection.url} project {project_id} task {task_id} ({spec.subject})"
            added += record_exposure(s, "labelstudio", people, spec.exposes, via)
    return added


def _row(key: str, task_id: int, spec: TaskSpec) -> LsTask:
    return LsTask(
        project_key=key,
        task_id=task_id,
        ref=spec.ref,
        subject=spec.subject,
        view=spec.view,
        inputs_hash=spec.inputs_hash,
        data_hash=data_hash(task_data(spec)),
    )
