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
from collections.abc import Hashable
from types import MappingProxyType
from typing import Any, cast

from sqlalchemy import select

from curation.config import ReviewSettings
from curation.errors import Problem, ValidationFailed
from curation.fact_loading import load_facts
from curation.kinds import GroupStage, LabelStudioSpec, Stage, all_stages, stage_named
from curation.notes import NOTE_LABELS, NOTE_MODALITIES, item_notes
from curation.reviews import StageGuard
from curation.tables import Asset
from curation.vocab import CHECKLIST_VIEWS, PLACEHOLDERS, view_modalities
from curation.workflow import ItemFacts, derive_status, open_groups
from curation.workspace import Workspace

from .connection import Connection
from .engine import ProjectKind, Pulled, pull, push
from .media import audio_html, image_html, media_url
from .projects import AnnotationOutcome, instructions
from .pulling import PullCounts, Seen, Verdict
from .pushing import PushReport, TaskSpec
from .results import Control, bind_controls, prefill_regions
from .stage_records import RETIRED, STALE, PullReport, Refusal, StageFacts, record_problem, record_stage
from .tables import LsProject


def _stage(stage: str) -> Stage:
    """The registered stage served through Label Studio; refused when unknown or without a Label Studio form."""
    found = stage_named(stage)
    if found is None or found.labelstudio is None:
        served = [s.name for s in all_stages() if s.labelstudio is not None]
        raise ValidationFailed([Problem(f"unknown stage {stage!r}; stages are {', '.join(served)}", "stage")])
    return found


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
                prefill=prefill_regions(found.prefill(item) or {}, bound),
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


class StageProject(ProjectKind):
    """A review stage's project: a vote is a reviewer's answer on an item (per view) or a group, recorded as a
    review record; the stage's separation, exposure and record rules refuse what the app refuses."""

    roles = frozenset({"reviewer"})
    annotator = "reviewer"
    events = MappingProxyType({"skipped": "review.skipped", "refused": "review.refused"})

    def __init__(self, ws: Workspace, stage: str) -> None:
        self.ws, self.stage = ws, _stage(stage)
        self.key = project_key(stage)
        self.title = f"{ws.root.name}: {stage}"
        self.quorum = quorum(ws, stage)
        self.push_hint = f"run `curate ls push {stage}` first"
        self.in_order = _spec(stage, None).per_view

    def instruction(self) -> str | None:
        return instructions(self.ws, self.stage.name)

    def label_config(self) -> str:
        return label_config(self.stage.name, self.ws.settings.review)

    def controls(self) -> dict[str, Control]:
        return controls(self.stage.name, self.ws.settings.review)

    def tasks(self, connection: Connection) -> list[TaskSpec]:
        return wanted_tasks(self.ws, connection, self.stage.name)

    def load(self) -> None:
        self.facts = _facts(self.ws, self.stage.name)

    def _subject(self, seen: Seen) -> tuple[str, str, ItemFacts | None]:
        assert seen.row is not None
        kind, _, ident = seen.row.subject.partition(":")
        return kind, ident, self.facts.by_id.get(ident) if kind == "item" else None

    def locate(self, seen: Seen) -> str:
        kind, ident, item = self._subject(seen)
        return f"item {ident!r} is no longer in the workspace" if kind == "item" and item is None else ""

    def admit(self, seen: Seen) -> Hashable | Verdict:
        """Nobody reviews their own item (or group); an annotation of an earlier revision is stale or retired."""
        row, person = seen.row, seen.person
        assert row is not None and person is not None
        kind, ident, item = self._subject(seen)
        if kind == "group" and person in {m.author for m in self.facts.sisters.get(ident, [])}:
            reason = f"{person!r} authored an item of group {ident!r}: nobody reviews their own item"
            return Verdict(seen, "refused", reason=reason)
        if item is not None and item.author == person:
            return Verdict(seen, "refused", reason=f"{person!r} authored {item.id!r}: nobody reviews their own item")
        if self.facts.current_inputs(row.subject) != row.inputs_hash:
            if seen.previous in ("recorded", "retired", "incomplete", "superseded"):
                return Verdict(seen, "retired", reason=RETIRED)
            return Verdict(seen, "skipped") if seen.skipped else Verdict(seen, "refused", reason=STALE)
        return (row.subject, person, row.view)

    def guard(self, seen: Seen) -> str | None:
        assert seen.row is not None and seen.person is not None
        return self.facts.guard.refusal(seen.person, seen.row.subject)

    def options(self, seen: Seen) -> list[str]:
        _, _, item = self._subject(seen)
        return list(item.options) if item else []

    def accept(self, seen: Seen, values: dict[str, Any]) -> dict[str, Any] | str:
        assert seen.row is not None and seen.person is not None
        if seen.row.view is not None:  # a per-view answer: its record is checked once every view is in
            return values
        kind, ident, item = self._subject(seen)
        return record_problem(self.facts.stage, item, kind, ident, seen.person, values) or values

    def new_report(self, project: LsProject) -> PullReport:
        return PullReport(stage=self.stage.name, project_id=project.project_id)

    def refusal(self, outcome: AnnotationOutcome) -> Refusal:
        return Refusal(outcome.annotation, outcome.task, outcome.subject, outcome.user, outcome.reason)

    def record(self, ws: Workspace, pulled: Pulled, report: PullCounts) -> list[AnnotationOutcome]:
        assert isinstance(report, PullReport)
        return record_stage(ws, self.facts, pulled, report)


def _facts(ws: Workspace, stage: str) -> StageFacts:
    with ws.session() as s:
        items, perturbed = load_facts(s)
    found = _stage(stage)
    discarded = (
        {st.id for st in derive_status(ws) if st.state == "discarded"} if isinstance(found, GroupStage) else set()
    )
    sisters: dict[str, list[ItemFacts]] = defaultdict(list)
    for i in items:
        if i.id not in discarded:  # a group is judged on its live sisters, as when it was pushed
            sisters[i.group].append(i)
    return StageFacts(found, {i.id: i for i in items}, sisters, perturbed, StageGuard(ws, found))


def push_stage(ws: Workspace, connection: Connection, stage: str, recreate: bool = False) -> PushReport:
    """Create or update the stage's project and bring its tasks in line with the pending items."""
    return push(ws, connection, StageProject(ws, stage), recreate)


def pull_stages(ws: Workspace, connection: Connection, stages: list[str]) -> list[PullReport]:
    """Pull several stages; every project is checked before anything is recorded."""
    return cast(list[PullReport], pull(ws, connection, [StageProject(ws, stage) for stage in stages]))


def pushed_stages(ws: Workspace) -> list[str]:
    with ws.session() as s:
        keys = set(s.execute(select(LsProject.key)).scalars())
    return [s.name for s in all_stages() if s.labelstudio is not None and project_key(s.name) in keys]
