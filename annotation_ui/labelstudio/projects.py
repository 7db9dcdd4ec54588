"""Projects on the server and what the bridge reads back from them, trusting nothing it returns.

A project is created once per key and brought in line on each push (only what differs is sent; the labeling
config only when it changed, since the server checks every annotation against it). Reading back: the export,
the users, who an annotation may be credited to, and what a pull made of each annotation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete
from sqlmodel import Session

from curation.tables import utcnow
from curation.workspace import Workspace, record_event

from .connection import Server, same_server
from .errors import LabelingConfigRefused, LabelStudioRequestFailed, ProjectDeleted
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
