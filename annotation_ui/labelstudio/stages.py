"""Review stages as Label Studio projects: ``curate ls push STAGE`` and ``curate ls pull [STAGE]``.

One project per stage. The subset checklist gets one task per item and view, ordered from the single
modalities to the full view, each showing only that view's modalities (hidden ones as the placeholders of
``curation.vocab``), so that a reviewer working through the queue judges a view before seeing more.
The answer check shows the options and never the label. The group-integration project, which shows every
sister's label, gets a group's task only once the group is open (every live sister passed its answer check);
since every Label Studio user can read every project, publishing it records an exposure of each person with a
user there (``curation.exposure``). Pulled annotations are validated here and recorded through
``curation.reviews.record_reviews`` — the code path of ``curate import reviews``; a vote whose annotation was
deleted, or edited into something refused, is withdrawn.
"""

from __future__ import annotations

import dataclasses
import html
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select

from curation.config import ReviewSettings
from curation.errors import Problem, ValidationFailed
from curation.kinds import GroupStage, LabelStudioSpec, Stage, all_stages, stage_named
from curation.notes import NOTE_LABELS, NOTE_MODALITIES, item_notes
from curation.reviews import PendingReview, ReviewReport, StageGuard, Withdrawal, record_reviews, withdraw_reviews
from curation.screening.items import revise_items
from curation.screening.revise import ReviseRecord
from curation.tables import Asset, Person
from curation.vocab import CHECKLIST_VIEWS, PLACEHOLDERS, view_modalities
from curation.workflow import ItemFacts, derive_status, load_facts, open_groups
from curation.workspace import Workspace

from .connection import Connection, Server
from .projects import (
    TAMPERED,
    AnnotationOutcome,
    PushReport,
    TaskSpec,
    audio_html,
    export_tasks,
    image_html,
    instructions,
    known_project,
    media_url,
    push_tasks,
    users_by_id,
)
from .pulling import Seen, Verdict, decide, read_export, reopen_tasks, store_outcomes
from .results import Control, ResultRefused, bind_controls, read_result
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


def _spec(stage: str, settings: ReviewSettings | None) -> LabelStudioSpec:
    """The stage's project under the workspace's review settings (the checklist asks each exclusion rule)."""
    found = _stage(stage)
    spec = found.labelstudio_spec(settings) if settings is not None else found.labelstudio
    assert spec is not None
    return spec


def controls(stage: str, settings: ReviewSettings | None = None) -> dict[str, Control]:
    """The stage's declared controls as the result reader checks them."""
    return {name: Control(**dataclasses.asdict(c)) for name, c in _spec(stage, settings).controls.items()}


def label_config(stage: str, settings: ReviewSettings | None = None) -> str:
    return _spec(stage, settings).label_config


def project_key(stage: str) -> str:
    return f"stage:{stage}"


def quorum(ws: Workspace, stage: str) -> int:
    return _stage(stage).quorum(ws.settings.review)


# ----- tasks --------------------------------------------------------------------------------------
def _options(item: ItemFacts) -> list[dict[str, str]]:
    return [{"value": key, "html": f"<b>{key}</b>&nbsp;{html.escape(text)}"} for key, text in item.options.items()]


def _options_html(item: ItemFacts) -> str:
    return "".join(f"<p><b>{k}</b> {html.escape(v)}</p>" for k, v in item.options.items())


def _notes_html(item: ItemFacts, shown: tuple[str, ...] | frozenset[str] = NOTE_MODALITIES) -> str:
    """The item's notes on the shown modalities, escaped (text people typed is shown as typed)."""
    notes = item_notes(item.extra) if item.kind == "mcq" else {}
    return (
        "".join(f"<p><b>{NOTE_LABELS[m]}:</b> {html.escape(text)}</p>" for m, text in notes.items() if m in shown)
        or "<p><i>No audio or image note.</i></p>"
    )


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
    if any(m in shown for m in item_notes(item.extra)) and item.kind == "mcq":  # a note goes with its modality
        parts.append(_notes_html(item, shown))
    return "".join(parts)


def _group_panel(
    connection: Connection, sisters: list[ItemFacts], perturbed: str, blobs: dict[str, str], checks: list[str]
) -> str:
    """The sisters side by side with the automatic group checks' findings, as the app's group page shows them."""
    found = ", ".join(html.escape(r) for r in checks)
    rows = [
        f"<p>perturbed modality: <b>{html.escape(perturbed)}</b></p>",
        f"<p><b>Automatic checks:</b> {found}</p>" if checks else "<p><b>Automatic checks:</b> all pass.</p>",
    ]
    for s in sisters:
        options = ", ".join(f"{k}: {html.escape(v)}" for k, v in s.options.items())
        rows.append(
            f"<hr/><h4>{html.escape(s.id)} — answer {html.escape(s.answer)}</h4><p>{html.escape(s.context)}</p>"
            + (image_html(connection, blobs[s.image], 320) if s.image else "")
            + (audio_html(connection, blobs[s.audio]) if s.audio else "")
            + (_notes_html(s) if item_notes(s.extra) and s.kind == "mcq" else "")
            + f"<p>{html.escape(s.question)}</p><p>{options}</p>"
        )
    return "".join(rows)


def wanted_tasks(ws: Workspace, connection: Connection, stage: str) -> list[TaskSpec]:
    """The stage's pending items (or groups) as tasks, in the order reviewers should meet them."""
    found = _stage(stage)
    spec = _spec(stage, ws.settings.review)
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
        for group in open_groups(statuses, stage):
            sisters = [i for i in items if i.group == group and i.id in live]
            inputs = found.group_inputs(perturbed[group], sisters)
            media = tuple(sorted({blobs[x] for s in sisters for x in (s.image, s.audio) if x}))
            specs.append(
                TaskSpec(
                    ref=f"{stage}|group:{group}|{inputs[:16]}",
                    subject=f"group:{group}",
                    inputs_hash=inputs,
                    data={
                        "panel": _group_panel(
                            connection,
                            sisters,
                            perturbed[group],
                            blobs,
                            found.rules(perturbed[group], sisters, ws.settings.review),
                        ),
                        "group": group,
                    },
                    media=media,
                    exposes=tuple(s.id for s in sisters),
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
    bound = bind_controls(spec.label_config, controls(stage, ws.settings.review))
    for item in pending:
        inputs = found.inputs(item)
        media = [blobs[getattr(item, m)] for m in ("image", "audio") if m in spec.task_fields and getattr(item, m)]
        data = {**_task_data(spec.task_fields, connection, item, blobs, None), **found.task_values(item)}
        for name, sha in found.task_media(item).items():
            media.append(blobs[sha])
            data[name] = media_url(connection, blobs[sha])
        specs.append(
            TaskSpec(
                ref=f"{stage}|item:{item.id}|{inputs[:16]}",
                subject=f"item:{item.id}",
                inputs_hash=inputs,
                data=data,
                media=tuple(dict.fromkeys(media)),
                prefill=_prefill(found, item, bound),
            )
        )
    return specs


def _prefill(stage: Stage, item: ItemFacts, bound: dict[str, Control]) -> tuple[dict[str, Any], ...]:
    """The stage's starting values for an item as result regions of its labeling config."""
    values = stage.prefill(item)
    if not values:
        return ()
    regions = []
    for name, value in values.items():
        control = bound[name]
        if control.kind == "textarea":
            body: dict[str, Any] = {"text": [value]}
        elif control.kind == "choices":
            body = {"choices": [value]}
        else:
            body = {"rating": value}
        regions.append(
            {"from_name": name, "to_name": control.to_name, "type": control.kind, "value": body, "origin": "prediction"}
        )
    return tuple(regions)


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
        elif name == "notes_html":
            data["notes_html"] = _notes_html(item)
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
        label_config(stage, ws.settings.review),
        quorum(ws, stage),
        wanted,
        recreate,
        in_order=_stage(stage).labelstudio.per_view,  # type: ignore[union-attr]
        instruction=instructions(ws, stage),
    )


# ----- pulling ------------------------------------------------------------------------------------
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


@dataclass
class PullReport:
    stage: str
    project_id: int = 0
    annotations: int = 0
    recorded: int = 0
    revised: int = 0
    """Annotations whose edits made a new revision of their item (story ``revise``), also counted as recorded."""
    replaced: int = 0
    unchanged: int = 0
    withdrawn: int = 0
    skipped: int = 0
    incomplete: int = 0
    superseded: int = 0
    retired: int = 0
    deleted: int = 0
    reopened: int = 0
    refused: list[Refusal] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "project": self.project_id,
            "annotations": self.annotations,
            "recorded": self.recorded,
            "revised": self.revised,
            "replaced": self.replaced,
            "unchanged": self.unchanged,
            "withdrawn": self.withdrawn,
            "skipped": self.skipped,
            "incomplete": self.incomplete,
            "superseded": self.superseded,
            "retired": self.retired,
            "deleted": self.deleted,
            "reopened": self.reopened,
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
    return [_pull_one(ws, server, stage, project, tasks, users) for stage, project, tasks in exports]


def pushed_stages(ws: Workspace) -> list[str]:
    with ws.session() as s:
        keys = set(s.execute(select(LsProject.key)).scalars())
    return [s.name for s in all_stages() if s.labelstudio is not None and project_key(s.name) in keys]


@dataclass
class _Facts:
    """What judging a stage's annotations needs of the workspace, loaded once per pull."""

    stage: Stage
    people: dict[str, Person]
    by_id: dict[str, ItemFacts]
    sisters: dict[str, list[ItemFacts]]
    perturbed: dict[str, str]
    controls: dict[str, Control]
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


def _facts(ws: Workspace, stage: str) -> _Facts:
    with ws.session() as s:
        people = {p.name: p for p in s.execute(select(Person)).scalars()}
        items, perturbed = load_facts(s)
    found = _stage(stage)
    discarded = (
        {st.id for st in derive_status(ws) if st.state == "discarded"} if isinstance(found, GroupStage) else set()
    )
    sisters: dict[str, list[ItemFacts]] = defaultdict(list)
    for i in items:
        if i.id not in discarded:  # a group is judged on its live sisters, as when it was pushed
            sisters[i.group].append(i)
    bound = bind_controls(label_config(stage, ws.settings.review), controls(stage, ws.settings.review))
    return _Facts(found, people, {i.id: i for i in items}, sisters, perturbed, bound, StageGuard(ws, found))


def _pull_one(
    ws: Workspace, server: Server, stage: str, project: LsProject, tasks: list[dict[str, Any]], users: dict[int, str]
) -> PullReport:
    report = PullReport(stage=stage, project_id=project.project_id)
    key = project.key
    facts = _facts(ws, stage)
    emails = {(p.email or "").strip().lower(): p.name for p in facts.people.values() if p.email}
    seen, deleted = read_export(ws, key, tasks, users, emails)
    report.annotations = len(seen)
    verdicts = [_judge(facts, x) for x in seen]
    votes, superseded, _ = decide(verdicts)
    candidates = [
        _Candidate(
            v.seen.annotation,
            v.seen.task,
            v.seen.updated_at,
            v.seen.subject,
            v.seen.user,
            v.seen.person or "",
            v.seen.row.view if v.seen.row else None,
            v.values or {},
        )
        for v in votes.values()
    ]
    pendings, done = _records(facts.stage, candidates, facts.by_id)
    outcomes: list[AnnotationOutcome] = [
        v.seen.outcome(v.outcome, v.reason) for v in verdicts if v.outcome in ("skipped", "refused", "retired")
    ]
    outcomes += [
        v.seen.outcome("superseded", "a later annotation by the same reviewer replaces it") for v in superseded
    ]
    for outcome, reason, group in (
        ("incomplete", "waiting for the reviewer's other views of this item", done["incomplete"]),
        ("recorded", "", done["recorded"]),
    ):
        outcomes += [
            AnnotationOutcome(c.annotation, c.task, c.subject, c.user, c.person, outcome, reason, c.updated_at)
            for c in group
        ]

    revisions = [p for p in pendings if isinstance(p.review, ReviseRecord) and p.review.edits]
    recorded = record_reviews(
        ws,
        [p for p in pendings if p not in revisions],
        f"Label Studio project {project.project_id} annotation",
        source="labelstudio",
    )
    if revisions:  # edits make new revisions of story items (and their editors' sign-offs)
        report.revised = len(
            revise_items(
                ws,
                [(p.line, p.review) for p in revisions],  # type: ignore[misc]
                f"Label Studio project {project.project_id} annotation",
                source="labelstudio",
            ).revised
        )
    report.withdrawn = withdraw_reviews(
        ws, _withdrawals(ws, facts, key, done["recorded"], verdicts, deleted), "labelstudio"
    )
    store_outcomes(ws, key, outcomes + deleted, {"skipped": "review.skipped", "refused": "review.refused"})
    refused = {o.annotation for o in outcomes if o.outcome == "refused"}
    report.reopened = reopen_tasks(ws, server, project, quorum(ws, stage), tasks, refused)
    _count(report, recorded, outcomes, deleted)
    report.retired = sum(1 for v in verdicts if v.outcome == "retired" and v.seen.previous != "retired")
    return report


def _judge(facts: _Facts, seen: Seen) -> Verdict:
    """What one annotation is: a vote, a skip, a refusal (with the reason) or retired with a changed item."""
    if seen.refusal:
        return Verdict(seen, "refused", reason=seen.refusal)
    row = seen.row
    assert row is not None and seen.person is not None
    kind, _, ident = row.subject.partition(":")
    item = facts.by_id.get(ident) if kind == "item" else None
    if kind == "item" and item is None:
        return Verdict(seen, "refused", reason=f"item {ident!r} is no longer in the workspace")
    person = facts.people[seen.person]
    if "reviewer" not in person.role_set:
        return Verdict(seen, "refused", reason=f"{person.name!r} ({seen.email}) does not have the reviewer role")
    if kind == "group" and person.name in {m.author for m in facts.sisters.get(ident, [])}:
        return Verdict(
            seen,
            "refused",
            reason=f"{person.name!r} authored an item of group {ident!r}: nobody reviews their own item",
        )
    if item is not None and item.author == person.name:
        return Verdict(seen, "refused", reason=f"{person.name!r} authored {item.id!r}: nobody reviews their own item")
    if facts.current_inputs(row.subject) != row.inputs_hash:
        if seen.previous in ("recorded", "retired", "incomplete", "superseded"):
            return Verdict(seen, "retired", reason=RETIRED)
        return Verdict(seen, "skipped") if seen.skipped else Verdict(seen, "refused", reason=STALE)
    if seen.skipped:
        return Verdict(seen, "skipped")
    slot = (row.subject, person.name, row.view)
    refusal = facts.guard.refusal(person.name, row.subject)
    if refusal is not None:
        return Verdict(seen, "refused", slot, reason=refusal)
    if seen.tampered:
        return Verdict(seen, "refused", slot, reason=TAMPERED)
    try:
        values = read_result(seen.result, facts.controls, list(item.options) if item else [])
    except ResultRefused as exc:
        return Verdict(seen, "refused", slot, reason=str(exc))
    if row.view is None:
        problem = _record_problem(facts.stage, item, kind, ident, person.name, values)
        if problem:
            return Verdict(seen, "refused", slot, reason=problem)
    return Verdict(seen, "vote", slot, values)


def _record_problem(
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
    facts: _Facts,
    key: str,
    recorded: list[_Candidate],
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
    stage: Stage, candidates: list[_Candidate], by_id: dict[str, ItemFacts]
) -> tuple[list[PendingReview], dict[str, list[_Candidate]]]:
    """Review records from each reviewer's deciding annotation per subject (and view); a per-view stage needs every
    view of the item."""
    done: dict[str, list[_Candidate]] = {"recorded": [], "incomplete": []}
    pendings: list[PendingReview] = []
    by_reviewer: dict[tuple[str, str], list[_Candidate]] = defaultdict(list)
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


def _count(
    report: PullReport, recorded: ReviewReport, outcomes: list[AnnotationOutcome], deleted: list[AnnotationOutcome]
) -> None:
    report.recorded, report.replaced, report.unchanged = recorded.recorded, recorded.replaced, recorded.unchanged
    report.recorded += report.revised
    report.deleted = len(deleted)
    for o in outcomes:
        if o.outcome == "skipped":
            report.skipped += 1
        elif o.outcome == "incomplete":
            report.incomplete += 1
        elif o.outcome == "superseded":
            report.superseded += 1
        elif o.outcome == "refused":
            report.refused.append(Refusal(o.annotation, o.task, o.subject, o.user, o.reason))
