"""Review stages as Label Studio projects: ``curate ls push STAGE`` and ``curate ls pull [STAGE]``.

One project per stage. The subset checklist gets one task per item and view, ordered from the single
modalities to the full view, each showing only that view's modalities (hidden ones as the placeholders of
``curation.vocab``), so that a reviewer working through the queue judges a view before seeing more.
The answer check shows the options and never the label. Pulled annotations are validated here and
recorded through ``curation.reviews.record_reviews`` — the code path of ``curate import reviews``.
"""

from __future__ import annotations

import dataclasses
import html
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select

from curation.errors import Problem, ValidationFailed
from curation.kinds import GroupStage, Stage, all_stages, stage_named
from curation.reviews import PendingReview, ReviewReport, record_reviews
from curation.tables import Asset, Person
from curation.vocab import CHECKLIST_VIEWS, PLACEHOLDERS, view_modalities
from curation.workflow import ItemFacts, derive_status, load_facts
from curation.workspace import Workspace, record_event

from .connection import Connection, Server
from .projects import (
    REF_KEY,
    UNKNOWN_TASK,
    AnnotationOutcome,
    PushReport,
    TaskSpec,
    annotator_email,
    audio_html,
    export_tasks,
    image_html,
    known_project,
    mark_annotation,
    media_url,
    no_person,
    push_tasks,
    users_by_id,
)
from .results import Control, ResultRefused, read_result
from .tables import LsAnnotation, LsProject, LsTask


def _stage(stage: str) -> Stage:
    """The registered stage served through Label Studio; refused when unknown or without a Label Studio form."""
    found = stage_named(stage)
    if found is None or found.labelstudio is None:
        served = [s.name for s in all_stages() if s.labelstudio is not None]
        raise ValidationFailed([Problem(f"unknown stage {stage!r}; stages are {', '.join(served)}", "stage")])
    return found


def _require_stage(stage: str) -> None:
    _stage(stage)


def controls(stage: str) -> dict[str, Control]:
    """The stage's declared controls as the result reader checks them."""
    spec = _stage(stage).labelstudio
    assert spec is not None
    return {name: Control(**dataclasses.asdict(c)) for name, c in spec.controls.items()}


def label_config(stage: str) -> str:
    spec = _stage(stage).labelstudio
    assert spec is not None
    return spec.label_config


def project_key(stage: str) -> str:
    return f"stage:{stage}"


def quorum(ws: Workspace, stage: str) -> int:
    return _stage(stage).quorum(ws.settings.review)


# ----- tasks --------------------------------------------------------------------------------------
def _options(item: ItemFacts) -> list[dict[str, str]]:
    return [{"value": key, "html": f"<b>{key}</b>&nbsp;{html.escape(text)}"} for key, text in item.options.items()]


def _options_html(item: ItemFacts) -> str:
    return "".join(f"<p><b>{k}</b> {html.escape(v)}</p>" for k, v in item.options.items())


def _placeholder(modality: str) -> str:
    return f"<p><i>{html.escape(PLACEHOLDERS[modality])}</i></p>"


def _panel(connection: Connection, item: ItemFacts, view: str, blobs: dict[str, str]) -> str:
    """HTML showing only the view's modalities; the hidden ones (of those the item has) as their placeholders."""
    shown = view_modalities(view)
    parts = []
    if "text" in item.modalities:
        parts.append(f"<p>{html.escape(item.context)}</p>" if "text" in shown else _placeholder("text"))
    if "image" in item.modalities:
        parts.append(image_html(connection, blobs[item.image], 640) if "image" in shown else _placeholder("image"))
    if "audio" in item.modalities:
        parts.append(audio_html(connection, blobs[item.audio]) if "audio" in shown else _placeholder("audio"))
    return "".join(parts)


def _group_panel(connection: Connection, sisters: list[ItemFacts], perturbed: str, blobs: dict[str, str]) -> str:
    rows = [f"<p>perturbed modality: <b>{html.escape(perturbed)}</b></p>"]
    for s in sisters:
        options = ", ".join(f"{k}: {html.escape(v)}" for k, v in s.options.items())
        rows.append(
            f"<hr/><h4>{html.escape(s.id)} — answer {html.escape(s.answer)}</h4><p>{html.escape(s.context)}</p>"
            + (image_html(connection, blobs[s.image], 320) if s.image else "")
            + (audio_html(connection, blobs[s.audio]) if s.audio else "")
            + f"<p>{html.escape(s.question)}</p><p>{options}</p>"
        )
    return "".join(rows)


def wanted_tasks(ws: Workspace, connection: Connection, stage: str) -> list[TaskSpec]:
    """The stage's pending items (or groups) as tasks, in the order reviewers should meet them."""
    found = _stage(stage)
    spec = found.labelstudio
    assert spec is not None
    statuses = derive_status(ws)
    with ws.session() as s:
        items, perturbed = load_facts(s)
        exts = dict(s.execute(select(Asset.sha256, Asset.ext)).all())
    blobs = {sha: f"{sha}{ext}" for sha, ext in exts.items()}
    by_id = {i.id: i for i in items}
    pending = [by_id[st.id] for st in statuses if st.state == "in_review" and st.stage == stage]
    specs: list[TaskSpec] = []
    if isinstance(found, GroupStage):
        live = {st.id for st in statuses if st.state != "discarded"}
        groups = sorted({i.group for i in pending})
        for group in groups:
            sisters = [i for i in items if i.group == group and i.id in live]
            inputs = found.group_inputs(perturbed[group], sisters)
            media = tuple(sorted({blobs[x] for s in sisters for x in (s.image, s.audio) if x}))
            specs.append(
                TaskSpec(
                    ref=f"{stage}|group:{group}|{inputs[:16]}",
                    subject=f"group:{group}",
                    inputs_hash=inputs,
                    data={"panel": _group_panel(connection, sisters, perturbed[group], blobs), "group": group},
                    media=media,
                )
            )
        return specs
    if spec.per_view:
        every = CHECKLIST_VIEWS
        order = sorted(every, key=lambda v: (len(view_modalities(v)), every.index(v)))
        for view in order:
            for item in pending:
                if view not in found.views(item):
                    continue
                inputs = found.inputs(item)
                shown = view_modalities(view)
                media = tuple(blobs[x] for m, x in (("image", item.image), ("audio", item.audio)) if m in shown and x)
                specs.append(
                    TaskSpec(
                        ref=f"{stage}|item:{item.id}|{view}|{inputs[:16]}",
                        subject=f"item:{item.id}",
                        inputs_hash=inputs,
                        view=view,
                        data=_task_data(spec.task_fields, connection, item, blobs, view),
                        media=media,
                    )
                )
        return specs
    for item in pending:
        inputs = found.inputs(item)
        media = tuple(blobs[getattr(item, m)] for m in ("image", "audio") if m in spec.task_fields and getattr(item, m))
        specs.append(
            TaskSpec(
                ref=f"{stage}|item:{item.id}|{inputs[:16]}",
                subject=f"item:{item.id}",
                inputs_hash=inputs,
                data=_task_data(spec.task_fields, connection, item, blobs, None),
                media=media,
            )
        )
    return specs


def _task_data(
    fields: tuple[str, ...], connection: Connection, item: ItemFacts, blobs: dict[str, str], view: str | None
) -> dict[str, Any]:
    """The task data a stage's labeling config names, rendered for one item (and view)."""
    data: dict[str, Any] = {}
    for name in fields:
        if name == "context":
            data["context"] = item.context
        elif name == "question":
            data["question"] = item.question
        elif name == "options":
            data["options"] = _options(item)
        elif name == "options_html":
            data["options_html"] = _options_html(item)
        elif name in ("image", "audio"):
            sha = getattr(item, name)
            data[name] = media_url(connection, blobs[sha]) if sha else ""
        elif name == "view_title":
            data["view_title"] = f"View: {view} (only these modalities are shown)"
        elif name == "panel":
            assert view is not None
            data["panel"] = _panel(connection, item, view, blobs)
        else:
            raise ValueError(f"a labeling config asks for task field {name!r}, which the bridge does not render")
    return data


def push_stage(ws: Workspace, connection: Connection, stage: str, recreate: bool = False) -> PushReport:
    """Create or update the stage's project and bring its tasks in line with the pending items."""
    _require_stage(stage)
    connection.media_dir()  # refuse early when no document root is configured
    wanted = wanted_tasks(ws, connection, stage)
    return push_tasks(
        ws,
        connection,
        project_key(stage),
        f"{ws.root.name}: {stage}",
        label_config(stage),
        quorum(ws, stage),
        wanted,
        recreate,
    )


# ----- pulling ------------------------------------------------------------------------------------
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


@dataclass
class PullReport:
    stage: str
    project_id: int = 0
    annotations: int = 0
    recorded: int = 0
    replaced: int = 0
    unchanged: int = 0
    skipped: int = 0
    incomplete: int = 0
    superseded: int = 0
    refused: list[Refusal] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "project": self.project_id,
            "annotations": self.annotations,
            "recorded": self.recorded,
            "replaced": self.replaced,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "incomplete": self.incomplete,
            "superseded": self.superseded,
            "refused": [r.as_json() for r in self.refused],
        }

    def summary(self) -> str:
        return (
            f"{self.stage}: {self.annotations} annotation(s) — {self.recorded} recorded, {self.replaced} replaced, "
            f"{self.unchanged} unchanged, {self.skipped} skipped, {self.incomplete} waiting for the rest of a checklist, "
            f"{len(self.refused)} refused"
        )


@dataclass
class _Candidate:
    annotation: int
    task: int
    updated_at: str
    subject: str
    user: str
    person: str
    view: str | None
    values: dict[str, Any]


def pull_stages(ws: Workspace, connection: Connection, stages: list[str]) -> list[PullReport]:
    """Pull several stages; every project is checked before anything is recorded."""
    for stage in stages:
        _require_stage(stage)
    projects = [
        (stage, known_project(ws, project_key(stage), f"run `curate ls push {stage}` first")) for stage in stages
    ]
    server = Server(connection)
    exports = [(stage, project, export_tasks(server, project)) for stage, project in projects]
    users = users_by_id(server)
    return [_pull_one(ws, stage, project, tasks, users) for stage, project, tasks in exports]


def pushed_stages(ws: Workspace) -> list[str]:
    with ws.session() as s:
        keys = set(s.execute(select(LsProject.key)).scalars())
    return [s.name for s in all_stages() if s.labelstudio is not None and project_key(s.name) in keys]


def _pull_one(
    ws: Workspace, stage: str, project: LsProject, tasks: list[dict[str, Any]], users: dict[int, str]
) -> PullReport:
    report = PullReport(stage=stage, project_id=project.project_id)
    key = project.key
    with ws.session() as s:
        local = {r.task_id: r for r in s.execute(select(LsTask).where(LsTask.project_key == key)).scalars()}
        people = {(p.email or "").strip().lower(): p for p in s.execute(select(Person)).scalars() if p.email}
        items, perturbed = load_facts(s)
    by_id = {i.id: i for i in items}
    sisters: dict[str, list[ItemFacts]] = defaultdict(list)
    found = _stage(stage)
    discarded = (
        {st.id for st in derive_status(ws) if st.state == "discarded"} if isinstance(found, GroupStage) else set()
    )
    for i in items:
        if i.id not in discarded:  # a group is judged on its live sisters, as when it was pushed
            sisters[i.group].append(i)
    outcomes: list[AnnotationOutcome] = []
    candidates: list[_Candidate] = []
    stage_controls = controls(stage)

    for task in tasks:
        task_id = int(task["id"])
        row = local.get(task_id)
        for ann in task.get("annotations") or []:
            report.annotations += 1
            email, user = annotator_email(ann, users)
            updated = str(ann.get("updated_at") or ann.get("created_at") or "")
            subject = row.subject if row else str((task.get("data") or {}).get(REF_KEY, "?"))
            person = people.get(email)

            base = AnnotationOutcome(
                int(ann["id"]), task_id, subject, user, person.name if person else None, "", "", updated
            )
            if row is None or (task.get("data") or {}).get(REF_KEY) != row.ref:
                outcomes.append(replace(base, outcome="refused", reason=UNKNOWN_TASK))
                continue
            if ann.get("was_cancelled"):
                outcomes.append(replace(base, outcome="skipped"))
                continue
            values = _judge_annotation(found, row, ann, person, email, by_id, sisters, perturbed, stage_controls)
            if isinstance(values, str):
                outcomes.append(replace(base, outcome="refused", reason=values))
                continue
            assert person is not None
            candidates.append(
                _Candidate(int(ann["id"]), task_id, updated, row.subject, user, person.name, row.view, values)
            )

    pendings, done, superseded = _records(found, candidates, by_id)
    for outcome, reason, group in (
        ("superseded", "a later annotation by the same reviewer replaces it", superseded),
        ("incomplete", "waiting for the reviewer's other views of this item", done["incomplete"]),
        ("recorded", "", done["recorded"]),
    ):
        outcomes += [
            AnnotationOutcome(c.annotation, c.task, c.subject, c.user, c.person, outcome, reason, c.updated_at)
            for c in group
        ]

    recorded = record_reviews(
        ws, pendings, f"Label Studio project {project.project_id} annotation", source="labelstudio"
    )
    _store_outcomes(ws, key, outcomes)
    _count(report, recorded, outcomes)
    return report


def _judge_annotation(
    stage: Stage,
    row: LsTask,
    ann: dict[str, Any],
    person: Person | None,
    email: str,
    by_id: dict[str, ItemFacts],
    sisters: dict[str, list[ItemFacts]],
    perturbed: dict[str, str],
    controls: dict[str, Control],
) -> str | dict[str, Any]:
    """The reason to refuse an annotation, or its values when it is acceptable."""
    kind, _, ident = row.subject.partition(":")
    item = by_id.get(ident) if kind == "item" else None
    if kind == "item" and item is None:
        return f"item {ident!r} is no longer in the workspace"
    options = list(item.options) if item else []
    try:
        values = read_result(ann.get("result") or [], controls, options)
    except ResultRefused as exc:
        return str(exc)
    if person is None:
        return no_person(email)
    if "reviewer" not in person.role_set:
        return f"{person.name!r} ({email}) does not have the reviewer role"
    if isinstance(stage, GroupStage):
        members = sisters.get(ident, [])
        if person.name in {m.author for m in members}:
            return f"{person.name!r} authored an item of group {ident!r}: nobody reviews their own item"
        current = stage.group_inputs(perturbed.get(ident, ""), list(members))
    else:
        assert item is not None
        if item.author == person.name:
            return f"{person.name!r} authored {item.id!r}: nobody reviews their own item"
        current = stage.inputs(item)
    if current != row.inputs_hash:
        return "stale: the item (or group) changed after this task was pushed; push again and review the new task"
    return values


def _records(
    stage: Stage, candidates: list[_Candidate], by_id: dict[str, ItemFacts]
) -> tuple[list[PendingReview], dict[str, list[_Candidate]], list[_Candidate]]:
    """Review records from the latest annotation per reviewer, subject (and view); a per-view stage needs every
    view of the item."""
    latest: dict[tuple[str, str, str | None], _Candidate] = {}
    superseded: list[_Candidate] = []
    for c in sorted(candidates, key=lambda c: (c.updated_at, c.annotation)):
        slot = (c.subject, c.person, c.view)
        if slot in latest:
            superseded.append(latest[slot])
        latest[slot] = c
    done: dict[str, list[_Candidate]] = {"recorded": [], "incomplete": []}
    pendings: list[PendingReview] = []
    by_reviewer: dict[tuple[str, str], list[_Candidate]] = defaultdict(list)
    for (subject, person, _view), c in latest.items():
        by_reviewer[(subject, person)].append(c)
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
    return pendings, done, superseded


def _store_outcomes(ws: Workspace, key: str, outcomes: list[AnnotationOutcome]) -> None:
    """Remember each annotation's outcome; a new skip or refusal is also an event."""
    with ws.writing() as s:
        existing = {
            r.annotation_id: r for r in s.execute(select(LsAnnotation).where(LsAnnotation.project_key == key)).scalars()
        }
        for o in outcomes:
            row = existing.get(o.annotation)
            changed = row is None or (row.outcome, row.reason, row.annotation_updated_at) != (
                o.outcome,
                o.reason,
                o.updated_at,
            )
            if not changed:
                continue
            row = mark_annotation(s, key, row, o)
            row.subject, row.ls_user, row.task_id = o.subject, o.user, o.task
            if o.outcome in ("skipped", "refused"):
                action = "review.skipped" if o.outcome == "skipped" else "review.refused"
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


def _count(report: PullReport, recorded: ReviewReport, outcomes: list[AnnotationOutcome]) -> None:
    report.recorded, report.replaced, report.unchanged = recorded.recorded, recorded.replaced, recorded.unchanged
    for o in outcomes:
        if o.outcome == "skipped":
            report.skipped += 1
        elif o.outcome == "incomplete":
            report.incomplete += 1
        elif o.outcome == "superseded":
            report.superseded += 1
        elif o.outcome == "refused":
            report.refused.append(Refusal(o.annotation, o.task, o.subject, o.user, o.reason))
