"""Projects and tasks on the server, kept in step with what the workspace wants shown.

Every task carries a ``omnicurate_ref`` in its data: the stable key of what it shows (including the hash of
its inputs). Pushing compares refs, so a second push adds nothing, a crashed push is adopted rather than
duplicated, a changed item gets a new task, and a task nobody wants any more is deleted, or kept, closed to
annotation and marked retired when it already has annotations.

Nothing the server returns is trusted: the hash of each task's data is kept and compared (a task whose data
was changed on the server is restored on push, and annotations made on the changed data are refused); the
labeling config is sent only when it differs from the server's; and each task's overlap is set here so that
a refused annotation does not use up a task's share (the task asks for one more annotator per refused one)
and, where order matters, tasks are served in the order they were pushed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, select
from sqlmodel import Session

from curation.exposure import record_exposure
from curation.tables import Person, utcnow
from curation.workspace import Workspace, record_event

from .connection import Connection, Server, same_server
from .errors import LabelingConfigRefused, LabelStudioRequestFailed, MediaMissing, ProjectDeleted
from .results import misfits
from .tables import LsAnnotation, LsProject, LsTask

REF_KEY = "omnicurate_ref"
UNKNOWN_TASK = "the task was not pushed by this workspace, or its reference was changed on the server"
"""Why an annotation on a task this workspace does not recognise is refused."""
TAMPERED = (
    "the task's data was changed on the server after it was pushed, so this annotation judged something else; "
    "`curate ls push` restores the task, then annotate it again"
)
"""Why an annotation made while its task showed other data is refused (it stays refused until it is edited)."""

PROJECT_SETTINGS: dict[str, Any] = {
    "sampling": "Sequential sampling",
    "show_overlap_first": False,
    "show_skip_button": True,
}


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
        return {
            "project": self.project_id,
            "created": self.created,
            "kept": self.kept,
            "adopted": self.adopted,
            "deleted": self.deleted,
            "retired": self.retired,
            "reopened": self.reopened,
            "restored": self.restored,
            "media_published": self.media_published,
            "config_sent": self.config_sent,
            "exposures": self.exposures,
        }

    def summary(self) -> str:
        return (
            f"project {self.project_id}: {self.created} task(s) created, {self.kept} kept, {self.adopted} adopted, "
            f"{self.deleted} deleted, {self.retired} retired (annotated, kept and closed), {self.reopened} reopened, "
            f"{self.restored} restored (data changed on the server); {self.media_published} medium/media published"
            + (f"; {self.exposures} label exposure(s) recorded" if self.exposures else "")
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


def task_data(spec: TaskSpec) -> dict[str, Any]:
    """The data a task is pushed with: what it shows, and its ref."""
    return {**spec.data, REF_KEY: spec.ref}


def task_payload(spec: TaskSpec) -> dict[str, Any]:
    """What a new task is imported as: its data, and its starting values as a prediction when it has any."""
    if not spec.prefill:
        return task_data(spec)
    return {"data": task_data(spec), "predictions": [{"model_version": "omnicurate", "result": list(spec.prefill)}]}


def data_hash(data: Any) -> str:
    """A stable hash of a task's data, to notice any change made on the server."""
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


# ----- projects -----------------------------------------------------------------------------------
def instructions(ws: Workspace, page: str) -> str | None:
    """The guidelines of a stage or judge page (``guidelines/<page>.md``) as the HTML of a project's
    instructions; None when the maintainer wrote none. Raw HTML in the file is not passed through."""
    from markdown_it import MarkdownIt

    from curation.guidelines import stage_guidelines

    text = stage_guidelines(ws, page)
    return None if text is None else MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def ensure_project(
    ws: Workspace,
    server: Server,
    key: str,
    title: str,
    label_config: str,
    maximum: int,
    recreate: bool = False,
    instruction: str | None = None,
) -> tuple[int, bool]:
    """The server project for ``key`` and whether the config was sent: created the first time, else brought in line.

    Only settings that differ from the server's are sent. Label Studio checks a new labeling config against
    every annotation of the project (and refuses it when one does not fit, even when the config is unchanged),
    so the config is sent only when it changed, and a refusal names the annotations in the way.
    """
    client = server.client
    url = server.connection.url
    with ws.session() as s:
        known = s.get(LsProject, key)
    wanted: dict[str, Any] = dict(
        title=title, label_config=label_config, maximum_annotations=maximum, **PROJECT_SETTINGS
    )
    if instruction is not None:  # the maintainer's guidelines, shown before annotating
        wanted.update(expert_instruction=instruction, show_instruction=True)
    if known is not None and not recreate:
        if not same_server(known.server_url, url):
            raise ProjectDeleted(
                f"{key} was pushed to {known.server_url} (project {known.project_id}), not to {url}; "
                "use --recreate to start it afresh on this server (annotations not yet pulled stay on the old one)"
            )
        current = _require_on_server(server, known)
        changed = {k: v for k, v in wanted.items() if getattr(current, k, None) != v}
        if changed:
            try:
                server.call(
                    f"updating project {known.project_id} ({key})", client.projects.update, known.project_id, **changed
                )
            except LabelStudioRequestFailed as exc:
                if "label_config" in changed and "label_config" in str(exc):
                    raise _config_refused(server, known, label_config, exc) from exc
                raise
        _ensure_storage(server, known.project_id)
        return known.project_id, "label_config" in changed
    created = server.call(f"creating a project for {key}", client.projects.create, **wanted)
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
                s, "labelstudio", "labelstudio.project_recreated", key, before, {"server": url, "project": project_id}
            )
        else:
            s.add(LsProject(key=key, server_url=url, project_id=project_id, title=title))
            record_event(
                s, "labelstudio", "labelstudio.project_created", key, None, {"server": url, "project": project_id}
            )
    _ensure_storage(server, project_id)
    return project_id, True


def _config_refused(
    server: Server, project: LsProject, label_config: str, exc: LabelStudioRequestFailed
) -> LabelingConfigRefused:
    """Name every annotation the new config cannot hold, and what to do about it."""
    users = users_by_id(server)
    named = []
    for task in export_tasks(server, project):
        for ann in task.get("annotations") or []:
            for misfit in misfits(ann.get("result") or [], label_config):
                _, user = annotator_email(ann, users)
                named.append(f"annotation {ann.get('id')} (task {task.get('id')}, by {user}): {misfit}")
    listed = "; ".join(named) if named else f"(the server said: {exc})"
    return LabelingConfigRefused(
        f"Label Studio refused the new labeling config of project {project.project_id} ({project.key}) because "
        f"annotations made under the old one do not fit it: {listed}. Pull first (`curate ls pull`) so that "
        "nothing recorded is lost, then delete or correct those annotations in Label Studio and push again; "
        "nothing was changed on the server"
    )


def _require_on_server(server: Server, project: LsProject) -> Any:
    """Read the project back, refusing with what to do when it was deleted on the server."""
    return server.call(
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


# ----- tasks --------------------------------------------------------------------------------------
def server_tasks(server: Server, project_id: int) -> list[dict[str, Any]]:
    """Every task of the project with its data, overlap and annotations, as plain dicts."""
    tasks = server.call(
        f"listing the tasks of project {project_id}",
        lambda: list(server.client.tasks.list(project=project_id, fields="all", page_size=500)),
    )
    return [t.dict() if hasattr(t, "dict") else dict(t) for t in tasks]


def user_id(value: Any) -> int | None:
    """A user id as exports give it: an integer, or an object with an ``id``."""
    value = value.get("id") if isinstance(value, dict) else value
    try:
        return int(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def wanted_overlap(quorum: int, annotations: Iterable[dict[str, Any]], refused: set[int]) -> tuple[int, bool]:
    """(overlap, is_labeled) for a task: the quorum plus one per annotator none of whose annotations counts.

    Label Studio counts distinct annotators of non-skipped annotations against a task's overlap; an annotator
    whose every annotation on the task was refused (the author's own, a forged one) must not use up a share.
    """
    present: set[int] = set()
    counted: set[int] = set()
    for ann in annotations:
        who = user_id(ann.get("completed_by"))
        if who is None or ann.get("was_cancelled"):
            continue
        present.add(who)
        if int(ann.get("id", 0)) not in refused:
            counted.add(who)
    overlap = quorum + len(present - counted)
    return overlap, len(present) >= overlap


def set_overlap(server: Server, project_id: int, task_id: int, overlap: int, labeled: bool) -> None:
    server.call(
        f"setting the overlap of task {task_id} of project {project_id}",
        server.client.tasks.update,
        str(task_id),
        overlap=overlap,
        is_labeled=labeled,
    )


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
    if not same_server(project.server_url, server.connection.url):
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
    """(e-mail, display name) of who an annotation is attributed to; ``completed_by`` is an id or an object."""
    who = user_id(annotation.get("completed_by"))
    email = users.get(who, "") if who is not None else ""
    return email, email or f"#{who}"


def attribution_problem(annotation: dict[str, Any], users: dict[int, str]) -> str:
    """Why an annotation cannot be credited to the person it names, or "" when it can.

    Label Studio lets any client set ``completed_by`` to anyone; ``updated_by`` is the user who last
    submitted it. An annotation counts only for the person who submitted it.
    """
    completed, updated = user_id(annotation.get("completed_by")), user_id(annotation.get("updated_by"))
    if completed is None:
        return "the annotation names no annotator (completed_by is missing)"
    if updated is None:
        return "the server does not say who submitted the annotation (updated_by is missing), so it cannot be credited"
    if completed != updated:

        def name(i: int) -> str:
            return users.get(i) or f"user #{i}"

        return (
            f"submitted by {name(updated)} in the name of {name(completed)}: an annotation counts only for the "
            "person who submitted it; delete it in Label Studio so that the task is offered again"
        )
    return ""
