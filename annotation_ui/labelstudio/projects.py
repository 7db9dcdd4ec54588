"""Projects and tasks on the server, kept in step with what the workspace wants shown.

Every task carries a ``omnicurate_ref`` in its data: the stable key of what it shows (including the hash of
its inputs). Pushing compares refs, so a second push adds nothing, a crashed push is adopted rather than
duplicated, a changed item gets a new task, and a task nobody wants any more is deleted, or kept and
marked retired when it already has annotations.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, select
from sqlmodel import Session

from curation.tables import utcnow
from curation.workspace import Workspace, record_event

from .connection import Connection, Server
from .errors import LabelStudioRequestFailed, MediaMissing, ProjectDeleted
from .tables import LsAnnotation, LsProject, LsTask

REF_KEY = "omnicurate_ref"
UNKNOWN_TASK = "the task was not pushed by this workspace, or its data was changed on the server"
"""Why an annotation on a task this workspace does not recognise (or whose data changed) is refused."""


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


@dataclass
class PushReport:
    project_id: int = 0
    created: int = 0
    kept: int = 0
    adopted: int = 0
    deleted: int = 0
    retired: int = 0
    media_published: int = 0
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "project": self.project_id,
            "created": self.created,
            "kept": self.kept,
            "adopted": self.adopted,
            "deleted": self.deleted,
            "retired": self.retired,
            "media_published": self.media_published,
        }

    def summary(self) -> str:
        return (
            f"project {self.project_id}: {self.created} task(s) created, {self.kept} kept, {self.adopted} adopted, "
            f"{self.deleted} deleted, {self.retired} retired (annotated, kept); {self.media_published} medium/media published"
        )


def media_url(connection: Connection, blob: str) -> str:
    """The URL Label Studio serves a published blob under (local-files storage)."""
    return f"/data/local-files/?d={connection.media_folder}/{blob}"


def image_html(connection: Connection, blob: str, max_width: int) -> str:
    """A published image as HTML for a task's HyperText panel."""
    return f'<img src="{media_url(connection, blob)}" style="max-width:{max_width}px" alt="image"/>'


def audio_html(connection: Connection, blob: str) -> str:
    """A published clip as an HTML player that loads nothing until played."""
    return f'<audio controls preload="none" src="{media_url(connection, blob)}"></audio>'


def check_media(ws: Workspace, needed: dict[str, str]) -> None:
    """Every blob a task needs must be in the media store; ``needed`` maps blob -> who needs it."""
    missing = [f"{who}: {blob}" for blob, who in needed.items() if not ws.media.path(blob[:64], blob[64:]).is_file()]
    if missing:
        raise MediaMissing(
            f"{len(missing)} medium/media missing from the workspace media store ({ws.media.root}): "
            + "; ".join(missing[:10])
            + ("; ..." if len(missing) > 10 else "")
            + ". Re-import the items (or outputs) whose media are missing; nothing was pushed"
        )


def publish_media(ws: Workspace, connection: Connection, blobs: Iterable[str]) -> int:
    """Copy blobs into the server's document root (content-addressed: a blob already there is kept)."""
    target_dir = connection.media_dir()
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MediaMissing(f"cannot create {target_dir} to publish media: {exc}") from exc
    published = 0
    for blob in sorted(set(blobs)):
        target = target_dir / blob
        if target.is_file():
            continue
        source = ws.media.path(blob[:64], blob[64:])
        temporary = target_dir / f".{blob}.{uuid.uuid4().hex}"
        try:
            shutil.copyfile(source, temporary)
            os.replace(temporary, target)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise MediaMissing(f"cannot publish {source} to {target}: {exc}") from exc
        published += 1
    return published


def ensure_project(
    ws: Workspace,
    server: Server,
    key: str,
    title: str,
    label_config: str,
    maximum_annotations: int,
    recreate: bool = False,
) -> int:
    """The server project for ``key``: created the first time, its config and overlap kept up to date."""
    client = server.client
    url = server.connection.url
    with ws.session() as s:
        known = s.get(LsProject, key)
    settings: dict[str, Any] = dict(
        title=title, label_config=label_config, maximum_annotations=maximum_annotations, show_skip_button=True
    )
    if known is not None and not recreate:
        if known.server_url != url:
            raise ProjectDeleted(
                f"{key} was pushed to {known.server_url} (project {known.project_id}), not to {url}; "
                "use --recreate to start it afresh on this server (annotations not yet pulled stay on the old one)"
            )
        _require_on_server(server, known)
        server.call(
            f"updating project {known.project_id} ({key})", client.projects.update, known.project_id, **settings
        )
        project_id = known.project_id
    else:
        created = server.call(f"creating a project for {key}", client.projects.create, **settings)
        project_id = int(created.id)  # type: ignore[arg-type]
        with ws.writing() as s:
            if known is not None:
                s.execute(delete(LsTask).where(LsTask.project_key == key))
                s.execute(delete(LsAnnotation).where(LsAnnotation.project_key == key))
                row = s.get(LsProject, key)
                assert row is not None
                before = {"server": row.server_url, "project": row.project_id}
                row.server_url, row.project_id, row.title, row.created_at = url, project_id, title, utcnow()
                s.add(row)
                record_event(
                    s,
                    "labelstudio",
                    "labelstudio.project_recreated",
                    key,
                    before,
                    {"server": url, "project": project_id},
                )
            else:
                s.add(LsProject(key=key, server_url=url, project_id=project_id, title=title))
                record_event(
                    s, "labelstudio", "labelstudio.project_created", key, None, {"server": url, "project": project_id}
                )
    _ensure_storage(server, project_id)
    return project_id


def _require_on_server(server: Server, project: LsProject) -> None:
    """Read the project back, refusing with what to do when it was deleted on the server."""
    server.call(
        f"reading project {project.project_id} ({project.key})",
        server.client.projects.get,
        project.project_id,
        not_found=lambda: _deleted(project),
    )


def _deleted(known: LsProject) -> ProjectDeleted:
    return ProjectDeleted(
        f"project {known.project_id} ({known.key}) was deleted on {known.server_url}; annotations made there are "
        "lost to this workspace. Push again with --recreate to start a new project; nothing was changed"
    )


def _ensure_storage(server: Server, project_id: int) -> None:
    """Attach the local-files storage that lets the server serve published media for this project."""
    path = str(server.connection.media_dir())
    server.connection.media_dir().mkdir(parents=True, exist_ok=True)
    storages = server.call(
        f"listing the storages of project {project_id}", server.client.import_storage.local.list, project=project_id
    )
    if any(getattr(st, "path", None) == path for st in storages):
        return
    server.call(
        f"attaching local-files storage {path} to project {project_id} (the server must run with "
        f"LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED=true and a LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT above it)",
        server.client.import_storage.local.create,
        project=project_id,
        path=path,
        title="omnicurate media",
    )


def server_tasks(server: Server, project_id: int) -> list[Any]:
    return list(
        server.call(
            f"listing the tasks of project {project_id}",
            lambda: list(server.client.tasks.list(project=project_id, fields="all", page_size=500)),
        )
    )


def sync_tasks(ws: Workspace, server: Server, key: str, project_id: int, wanted: list[TaskSpec]) -> PushReport:
    """Create missing tasks, delete unwanted unannotated ones, retire unwanted annotated ones."""
    report = PushReport(project_id=project_id)
    on_server: dict[str, Any] = {}
    for task in server_tasks(server, project_id):
        ref = (task.data or {}).get(REF_KEY)
        if isinstance(ref, str):
            on_server.setdefault(ref, task)
    with ws.session() as s:
        local = {row.task_id: row for row in s.execute(select(LsTask).where(LsTask.project_key == key)).scalars()}
    wanted_refs = {spec.ref for spec in wanted}
    to_create = [spec for spec in wanted if spec.ref not in on_server]
    report.media_published = publish_media(ws, server.connection, (b for spec in to_create for b in spec.media))
    created_ids: list[int] = []
    if to_create:
        response = server.call(
            f"importing {len(to_create)} task(s) into project {project_id}",
            server.client.projects.import_tasks,
            id=project_id,
            request=[{**spec.data, REF_KEY: spec.ref} for spec in to_create],
            return_task_ids=True,
        )
        created_ids = [int(i) for i in (response.task_ids or [])]
        if len(created_ids) != len(to_create):
            raise LabelStudioRequestFailed(
                f"project {project_id}: sent {len(to_create)} task(s) but the server reported {len(created_ids)} "
                "task id(s); push again (tasks already there are recognised by their ref and not duplicated)"
            )
    to_delete: list[Any] = []
    to_retire: list[Any] = []
    for ref, task in on_server.items():
        if ref in wanted_refs:
            continue
        annotated = (task.total_annotations or 0) + (task.cancelled_annotations or 0) > 0
        (to_retire if annotated else to_delete).append(task)
    for task in to_delete:
        server.call(f"deleting task {task.id} of project {project_id}", server.client.tasks.delete, str(task.id))
    specs = {spec.ref: spec for spec in wanted}
    now = utcnow()
    with ws.writing() as s:
        for spec, task_id in zip(to_create, created_ids, strict=True):
            s.add(_row(key, task_id, spec))
            report.created += 1
        for ref, task in on_server.items():
            row = local.get(int(task.id))
            if ref in wanted_refs:
                if row is None:
                    s.add(_row(key, int(task.id), specs[ref]))
                    report.adopted += 1
                else:
                    report.kept += 1
        for state, tasks in (("deleted", to_delete), ("retired", to_retire)):
            for task in tasks:
                row = s.execute(
                    select(LsTask).where(LsTask.project_key == key, LsTask.task_id == int(task.id))
                ).scalar_one_or_none()
                if row is not None and row.state != state:
                    row.state, row.updated_at = state, now
                    s.add(row)
                    if state == "retired":
                        report.retired += 1
                if state == "deleted":
                    report.deleted += 1
    return report


def push_tasks(
    ws: Workspace,
    connection: Connection,
    key: str,
    title: str,
    label_config: str,
    maximum_annotations: int,
    wanted: list[TaskSpec],
    recreate: bool = False,
) -> PushReport:
    """Refuse before touching the server when a medium is missing, then bring the project and its tasks in line."""
    check_media(ws, {blob: spec.subject for spec in wanted for blob in spec.media})
    server = Server(connection)
    project_id = ensure_project(ws, server, key, title, label_config, maximum_annotations, recreate)
    return sync_tasks(ws, server, key, project_id, wanted)


def _row(key: str, task_id: int, spec: TaskSpec) -> LsTask:
    return LsTask(
        project_key=key,
        task_id=task_id,
        ref=spec.ref,
        subject=spec.subject,
        view=spec.view,
        inputs_hash=spec.inputs_hash,
    )


def known_project(ws: Workspace, key: str, hint: str) -> LsProject:
    from curation.errors import NotFoundError

    with ws.session() as s:
        row = s.get(LsProject, key)
    if row is None:
        raise NotFoundError(f"{key} was never pushed to Label Studio from this workspace: {hint}")
    return row


def export_tasks(server: Server, project: LsProject) -> list[dict[str, Any]]:
    """Every task of the project with its annotations (a JSON export); the project must still exist."""
    client = server.client
    if project.server_url != server.connection.url:
        raise ProjectDeleted(
            f"{project.key} lives on {project.server_url}, but the bridge is connected to {server.connection.url}; "
            "set LABEL_STUDIO_URL to that server to pull from it"
        )
    _require_on_server(server, project)
    exported = server.call(
        f"exporting project {project.project_id} ({project.key})",
        client.projects.exports.as_json,
        project.project_id,
        not_found=lambda: _deleted(project),
    )
    return [dict(task) for task in exported]


@dataclass
class AnnotationOutcome:
    """What a pull made of one annotation (recorded, skipped, refused...), as remembered in ``ls_annotation``."""

    annotation: int
    task: int
    subject: str
    user: str
    person: str | None
    outcome: str
    reason: str
    updated_at: str


def mark_annotation(s: Session, key: str, row: LsAnnotation | None, o: AnnotationOutcome) -> LsAnnotation:
    """Create the annotation's row when it has none, and set its outcome, reason, person and time."""
    if row is None:
        row = LsAnnotation(
            project_key=key,
            annotation_id=o.annotation,
            task_id=o.task,
            subject=o.subject,
            ls_user=o.user,
            outcome=o.outcome,
            annotation_updated_at=o.updated_at,
        )
    row.person, row.outcome, row.reason, row.annotation_updated_at = o.person, o.outcome, o.reason, o.updated_at
    s.add(row)
    return row


def no_person(email: str) -> str:
    """Why an annotation by an e-mail no person of the workspace has is refused, and how to fix it."""
    return (
        f"no person has the e-mail {email or '(none)'}: add one with "
        f"`curate people add NAME --role reviewer --email {email or 'EMAIL'}`"
    )


def users_by_id(server: Server) -> dict[int, str]:
    """Label Studio user id -> e-mail (lower case)."""
    users = server.call("listing users", server.client.users.list)
    return {int(u.id): (u.email or "").strip().lower() for u in users}


def annotator_email(annotation: dict[str, Any], users: dict[int, str]) -> tuple[str, str]:
    """(e-mail, display name) of who made an annotation; exports give ``completed_by`` as an id or an object."""
    user_id = annotation.get("completed_by")
    user_id = user_id.get("id") if isinstance(user_id, dict) else user_id
    email = users.get(int(user_id), "") if user_id is not None else ""
    return email, email or f"#{user_id}"
