# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""The ``judge_task`` kind in a workspace: imports (all or nothing, every problem named), stage records,
samples, serving, annotations, judge outputs and the report's inputs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import and_, exists, func, select

from curation.errors import MediaError, NotFoundError, PermissionDenied, Problem, ValidationFailed
from curation.jsonl import read_models
from curation.media import MediaInfo, inspect_audio, inspect_image, safe_media_path, sha256_file
from curation.tables import Asset, Person, utcnow
from curation.workspace import Workspace, record_event

from .checklists import (
    ChecklistBounds,
    TaskChecklist,
    apply_curation,
    check_adjudication,
    check_crosscheck,
    derive_task_checklist,
)
from .report import ReportSettings, judge_report
from .samples import UsableResponse, pair_samples, score_samples
from .schema import (
    ChecklistAdjudicationRecord,
    ChecklistEntry,
    ChecklistSelectionRecord,
    Choice,
    JudgeOutputLine,
    PairAnnotation,
    PairSample,
    ResponseLine,
    ResponseReviewRecord,
    Score,
    ScoreAnnotation,
    ScoreSample,
    TaskLine,
)
from .seen import refuse_if_stale, sample_content
from .tables import (
    JudgeAnnotation,
    JudgeCursor,
    JudgeDraft,
    JudgeOutput,
    JudgeRecord,
    JudgeResponse,
    JudgeSample,
    JudgeTask,
)

SAMPLE_KINDS = ("score", "pair")
ADJUDICATION = "checklist_adjudication"


def content_hash(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def bounds(ws: Workspace) -> ChecklistBounds:
    return ChecklistBounds(ws.settings.judge.checklist_min, ws.settings.judge.checklist_max)


# ---- media ---------------------------------------------------------------------------------------------


def _inspect(ws: Workspace, path: Path, modality: str) -> MediaInfo:
    sha = sha256_file(path)
    limit = ws.settings.media.max_file_mb * 1e6
    if path.stat().st_size > limit:
        raise MediaError(
            f"{path.name}: exceeds the limit of {ws.settings.media.max_file_mb:g} MB ([media] max_file_mb)"
        )
    if modality == "image":
        return inspect_image(path, sha, ws.settings.media.max_image_pixels)
    if modality == "audio":
        return inspect_audio(path, sha)
    from curation.mediatools.video import VIDEO_TYPES, probe_video

    video = probe_video(path)
    ext = next((e for name, (_, e) in VIDEO_TYPES.items() if name in video.container.split(",")), path.suffix.lower())
    return MediaInfo(
        sha,
        "video",
        video.mime,
        ext,
        video.size_bytes,
        width=video.width,
        height=video.height,
        duration_s=video.duration_s,
    )


@dataclass
class _Media:
    """Media of one import: inspected once per file, staged, and added as assets in the transaction."""

    ws: Workspace
    found: dict[Path, MediaInfo] = field(default_factory=dict)

    def inspect(self, base: Path, relative: str, modality: str) -> tuple[MediaInfo, Path]:
        path = safe_media_path(base, relative)
        info = self.found.get(path) or _inspect(self.ws, path, modality)
        if info.kind != modality:
            raise MediaError(f"{path.name}: is {info.kind}, but the field expects {modality}")
        self.found[path] = info
        return info, path

    def write(self, session, staging) -> None:  # type: ignore[no-untyped-def]
        known = set(session.execute(select(Asset.sha256)).scalars())
        for path, info in self.found.items():
            staging.keep(staging.intake(path, info.sha256), info.sha256, info.ext)  # refused if it changed since
            if info.sha256 in known:
                continue
            known.add(info.sha256)
            session.add(
                Asset(
                    sha256=info.sha256,
                    kind=info.kind,
                    mime=info.mime,
                    ext=info.ext,
                    size_bytes=info.size_bytes,
                    width=info.width,
                    height=info.height,
                    duration_s=info.duration_s,
                    sample_rate=info.sample_rate,
                    channels=info.channels,
                    original_name=path.name,
                )
            )


def _transaction(ws: Workspace, media: _Media | None, body: Callable[[Any], None]) -> None:
    """One write transaction with its staged media: everything lands, or nothing does."""
    staging = ws.media.stage()
    try:
        with ws.writing() as session:
            if media is not None:
                media.write(session, staging)
            body(session)
        staging.commit()
    except BaseException:
        staging.discard()
        raise


def _refuse(problems: list[Problem], file: str) -> None:
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; nothing was imported")


# ---- tasks and responses -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportCounts:
    added: int = 0
    unchanged: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"added": self.added, "unchanged": self.unchanged}

    def summary(self) -> str:
        return f"{self.added} added, {self.unchanged} unchanged"


TaskRows = list[tuple[int, TaskLine, dict[str, str]]]
"""(line number, the line, its media as modality -> content hash) of a file in the task line format."""


def read_task_lines(path: Path, media: _Media) -> TaskRows:
    """The lines of a task-format file (tasks, candidate queries) with their media staged; every problem of the
    file at once, and nothing staged that a later step would keep, when there is any."""
    file, problems = str(path), list[Problem]()
    rows: TaskRows = []
    seen: dict[str, int] = {}
    for number, line in read_models(path, TaskLine, problems):
        if line.id in seen:
            problems.append(Problem(f"duplicate id {line.id!r} (first on line {seen[line.id]})", "id", number, file))
            continue
        seen[line.id] = number
        inputs = {}
        for modality, relative in line.inputs.media().items():
            try:
                inputs[modality] = media.inspect(path.parent, relative, modality)[0].sha256
            except MediaError as exc:
                problems.append(Problem(str(exc), f"inputs.{modality}", number, file))
        rows.append((number, line, inputs))
    _refuse(problems, file)
    return rows


def store_new_lines(
    session: Any,
    table: Any,
    rows: TaskRows,
    build: Callable[[TaskLine, dict[str, str], str], Any],
    *,
    exclude: set[str],
    noun: str,
    event: str,
    file: str,
    actor: str,
) -> dict[str, int]:
    """Add the rows whose id is new (``build`` makes the table row from the line, its media and content hash);
    the same content again is unchanged, other content under a stored id is refused, every such line at once."""
    stored = {r.id: r.content_hash for r in session.execute(select(table)).scalars()}
    counts, clashes = {"added": 0, "unchanged": 0}, list[Problem]()
    for number, line, inputs in rows:
        data = {**line.model_dump(exclude=exclude), "inputs": inputs}
        digest = content_hash(data)
        if line.id in stored:
            if stored[line.id] != digest:
                clashes.append(Problem(f"{noun} {line.id!r} is already stored with other content", "id", number, file))
            else:
                counts["unchanged"] += 1
            continue
        session.add(build(line, inputs, digest))
        record_event(session, actor, event, f"{table.__tablename__}:{line.id}", None, data)
        counts["added"] += 1
    _refuse(clashes, file)
    return counts


def import_tasks(ws: Workspace, path: Path, actor: str = "cli") -> ImportCounts:
    """Import task lines; a task already stored with other content is refused (tasks are not revised)."""
    ws.recover_media()
    media = _Media(ws)
    rows = read_task_lines(path, media)
    counts: dict[str, int] = {}

    def build(task: TaskLine, inputs: dict[str, str], digest: str) -> JudgeTask:
        return JudgeTask(
            id=task.id,
            instruction=task.instruction,
            inputs=inputs,
            output=task.output,
            modality_pair=task.modality_pair,
            source=task.source,
            license=task.license,
            content_hash=digest,
            created_by=actor,
        )

    def write(session: Any) -> None:
        found = store_new_lines(
            session, JudgeTask, rows, build, exclude={"inputs"}, noun="task", event="judge.task.import",
            file=str(path), actor=actor,
        )  # fmt: skip
        counts.update(found)

    _transaction(ws, media, write)
    return ImportCounts(**counts)


def import_responses(ws: Workspace, path: Path, actor: str = "cli") -> ImportCounts:
    """Import responses; each must answer a stored task in that task's output modality."""
    ws.recover_media()
    file, problems, media = str(path), list[Problem](), _Media(ws)
    with ws.session() as s:
        tasks = {t.id: t.output for t in s.execute(select(JudgeTask)).scalars()}
    rows: list[tuple[int, ResponseLine, str | None]] = []
    seen: dict[str, int] = {}
    for number, response in read_models(path, ResponseLine, problems):
        rid = response.response_id
        if rid in seen:
            problems.append(Problem(f"duplicate response {rid!r} (first on line {seen[rid]})", "id", number, file))
            continue
        seen[rid] = number
        if response.task not in tasks:
            problems.append(
                Problem(
                    f"unknown task {response.task!r}; import it first (`curate judge checklists` lists the tasks)",
                    "task",
                    number,
                    file,
                )
            )
            continue
        modality = response.output.modality
        if modality != tasks[response.task]:
            problems.append(
                Problem(f"the task asks for {tasks[response.task]}, the response is {modality}", "output", number, file)
            )
            continue
        asset = None
        if modality != "text":
            try:
                asset = media.inspect(path.parent, getattr(response.output, modality), modality)[0].sha256
            except MediaError as exc:
                problems.append(Problem(str(exc), f"output.{modality}", number, file))
                continue
        rows.append((number, response, asset))
    _refuse(problems, file)
    counts = {"added": 0, "unchanged": 0}

    def write(session) -> None:  # type: ignore[no-untyped-def]
        stored = {r.id: r.content_hash for r in session.execute(select(JudgeResponse)).scalars()}
        clashes = []
        for number, response, asset in rows:
            rid = response.response_id
            data = {"task": response.task, "system": response.system, "text": response.output.text, "asset": asset}
            digest = content_hash(data)
            if rid in stored:
                if stored[rid] != digest:
                    clashes.append(
                        Problem(f"response {rid!r} is already stored with other content", "id", number, file)
                    )
                else:
                    counts["unchanged"] += 1
                continue
            session.add(
                JudgeResponse(
                    id=rid,
                    task=response.task,
                    system=response.system,
                    modality=response.output.modality,
                    text=response.output.text,
                    asset=asset,
                    content_hash=digest,
                )
            )
            counts["added"] += 1
        _refuse(clashes, file)

    _transaction(ws, media, write)
    return ImportCounts(**counts)


def tasks(ws: Workspace) -> list[JudgeTask]:
    with ws.session() as s:
        return list(s.execute(select(JudgeTask).order_by(JudgeTask.id)).scalars())


def task(ws: Workspace, task_id: str) -> JudgeTask:
    with ws.session() as s:
        found = s.get(JudgeTask, task_id)
    if found is None:
        raise NotFoundError(f"no judge task {task_id!r}; list them with `curate judge checklists`")
    return found


def responses(ws: Workspace, task_id: str | None = None) -> list[JudgeResponse]:
    with ws.session() as s:
        query = select(JudgeResponse).order_by(JudgeResponse.task, JudgeResponse.system)
        if task_id is not None:
            query = query.where(JudgeResponse.task == task_id)
        return list(s.execute(query).scalars())


# ---- drafts (the drafting cache) -----------------------------------------------------------------------


def cached_draft(ws: Workspace, input_hash: str, model: str, prompt_sha256: str) -> dict[str, Any] | None:
    with ws.session() as s:
        row = s.execute(
            select(JudgeDraft.output).where(
                JudgeDraft.input_hash == input_hash,
                JudgeDraft.model == model,
                JudgeDraft.prompt_sha256 == prompt_sha256,
            )
        ).first()
    return None if row is None else row[0]


def store_draft(
    ws: Workspace, task_id: str, input_hash: str, model: str, prompt_sha256: str, output: dict[str, Any]
) -> None:
    with ws.writing() as s:
        found = s.execute(
            select(JudgeDraft.id).where(
                JudgeDraft.input_hash == input_hash,
                JudgeDraft.model == model,
                JudgeDraft.prompt_sha256 == prompt_sha256,
            )
        ).first()
        if found is None:
            s.add(
                JudgeDraft(task=task_id, input_hash=input_hash, model=model, prompt_sha256=prompt_sha256, output=output)
            )


def drafted_candidates(ws: Workspace, task_id: str) -> list[ChecklistEntry]:
    """The entries of every draft stored for the task (the latest first wins an id), in rubric order."""
    with ws.session() as s:
        rows = list(
            s.execute(select(JudgeDraft).where(JudgeDraft.task == task_id).order_by(JudgeDraft.id.desc())).scalars()
        )
    entries: dict[str, ChecklistEntry] = {}
    for row in rows:
        for raw in row.output.get("entries", []):
            entry = ChecklistEntry.model_validate(raw)
            entries.setdefault(entry.id, entry)
    return list(entries.values())


# ---- stage records -------------------------------------------------------------------------------------


def _require_reviewer(s, name: str) -> None:  # type: ignore[no-untyped-def]
    person = s.get(Person, name)
    if person is None:
        raise NotFoundError(f"unknown person {name!r}; add them with `curate people add {name} --role reviewer`")
    if not person.role_set & {"reviewer", "maintainer"}:
        raise PermissionDenied(f"{name!r} has neither the reviewer nor the maintainer role")


def _put_record(s, subject: str, stage: str, reviewer: str, payload: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    row = s.execute(
        select(JudgeRecord).where(
            JudgeRecord.subject == subject, JudgeRecord.stage == stage, JudgeRecord.reviewer == reviewer
        )
    ).scalar_one_or_none()
    before = None if row is None else row.payload
    if row is None:
        s.add(JudgeRecord(subject=subject, stage=stage, reviewer=reviewer, payload=payload))
    elif row.payload != payload:
        row.payload, row.updated_at = payload, utcnow()
        s.add(row)
    else:
        return
    record_event(s, reviewer, f"judge.{stage}", f"judge_task:{subject}", before, payload)


def _records(s, subject: str | None = None) -> list[JudgeRecord]:  # type: ignore[no-untyped-def]
    query = select(JudgeRecord).order_by(JudgeRecord.id)
    if subject is not None:
        query = query.where(JudgeRecord.subject == subject)
    return list(s.execute(query).scalars())


def _task_checklist(ws: Workspace, task_id: str, records: Sequence[JudgeRecord]) -> TaskChecklist:
    payloads = {r.stage: r.payload for r in records}
    if not payloads:
        return TaskChecklist(task_id)
    return derive_task_checklist(task_id, drafted_candidates(ws, task_id), payloads)


def task_checklist(ws: Workspace, task_id: str) -> TaskChecklist:
    with ws.session() as s:
        records = [r for r in _records(s, task_id) if r.stage.startswith("checklist_")]
    return _task_checklist(ws, task_id, records)


def task_checklists(ws: Workspace) -> list[TaskChecklist]:
    with ws.session() as s:
        records = [r for r in _records(s) if r.stage.startswith("checklist_")]
    by_task: dict[str, list[JudgeRecord]] = {}
    for r in records:
        by_task.setdefault(r.subject, []).append(r)
    return [_task_checklist(ws, t.id, by_task.get(t.id, [])) for t in tasks(ws)]


def record_selection(ws: Workspace, record: ChecklistSelectionRecord) -> TaskChecklist:
    """Record a curation or a cross-check (a new record from the same person replaces theirs)."""
    task(ws, record.task)
    limits = bounds(ws)
    current = task_checklist(ws, record.task)
    if record.stage == "checklist_curation":
        candidates = drafted_candidates(ws, record.task)
        if not candidates:
            raise ValidationFailed(
                [Problem(f"task {record.task} has no drafted checklist yet; draft one first", "task")]
            )
        if current.crosscheck is not None and current.crosscheck.reviewer == record.reviewer:
            raise PermissionDenied(f"{record.reviewer} cross-checked task {record.task} and cannot curate it")
        apply_curation(candidates, record, limits)
    else:
        if current.curation is None:
            raise ValidationFailed([Problem(f"task {record.task} has no curated checklist to cross-check", "task")])
        check_crosscheck(current.curation, record, limits)
    with ws.writing() as s:
        _require_reviewer(s, record.reviewer)
        for other in _records(s, record.task):
            if other.stage == record.stage and other.reviewer != record.reviewer:
                raise ValidationFailed(
                    [Problem(f"{other.reviewer} already recorded the {record.stage} of task {record.task}", "reviewer")]
                )
        _put_record(s, record.task, record.stage, record.reviewer, record.model_dump(mode="json"))
    return task_checklist(ws, record.task)


def record_adjudication(ws: Workspace, record: ChecklistAdjudicationRecord) -> TaskChecklist:
    current = task_checklist(ws, record.task)
    check_adjudication(current, record, bounds(ws))
    with ws.writing() as s:
        person = s.get(Person, record.adjudicator)
        if person is None or "maintainer" not in person.role_set:
            raise PermissionDenied(f"{record.adjudicator!r} is not a maintainer; only maintainers adjudicate")
        _put_record(s, record.task, ADJUDICATION, record.adjudicator, record.model_dump(mode="json"))
    return task_checklist(ws, record.task)


def record_response_review(ws: Workspace, record: ResponseReviewRecord, seen: str | None = None) -> None:
    """Record one person's review of a response; ``seen`` (the response's content hash the page showed) makes a
    review of a response re-imported with other content since ``stale:response_review``."""
    with ws.writing() as s:
        _require_reviewer(s, record.reviewer)
        response = s.get(JudgeResponse, record.response)
        if response is None:
            raise NotFoundError(f"no response {record.response!r}")
        refuse_if_stale(seen, response.content_hash, "response_review", f"response {record.response}")
        _put_record(s, record.response, "response_review", record.reviewer, record.model_dump(mode="json"))


def response_reviews(ws: Workspace) -> dict[str, list[ResponseReviewRecord]]:
    with ws.session() as s:
        rows = s.execute(select(JudgeRecord).where(JudgeRecord.stage == "response_review")).scalars()
        out: dict[str, list[ResponseReviewRecord]] = {}
        for row in rows:
            out.setdefault(row.subject, []).append(ResponseReviewRecord.model_validate(row.payload))
    return out


def usable_responses(ws: Workspace) -> list[UsableResponse]:
    """Responses reviewed at least once and judged usable by every reviewer (none NSFW)."""
    reviews = response_reviews(ws)
    return [
        UsableResponse(r.id, r.task, r.system)
        for r in responses(ws)
        if reviews.get(r.id) and all(v.usable and not v.nsfw for v in reviews[r.id])
    ]


# ---- samples and serving -------------------------------------------------------------------------------


def build_samples(ws: Workspace) -> dict[str, int]:
    """Add score and pair samples for usable responses of tasks with a final checklist; existing samples stay."""
    settings = ws.settings.judge
    final = {t.task for t in task_checklists(ws) if t.state == "final"}
    usable = [r for r in usable_responses(ws) if r.task in final]
    pairs_by_task = {t.id: t.modality_pair for t in tasks(ws)}
    built: list[tuple[str, ScoreSample | PairSample]] = [("score", s) for s in score_samples(usable, pairs_by_task)]
    built += [("pair", p) for p in pair_samples(usable, pairs_by_task, settings.pairs_per_task, settings.sample_seed)]
    added = {"score": 0, "pair": 0}
    with ws.writing() as s:
        existing = set(s.execute(select(JudgeSample.id)).scalars())
        tasks_with_pairs = set(s.execute(select(JudgeSample.task).where(JudgeSample.kind == "pair")).scalars())
        top: dict[str, int] = dict(
            s.execute(select(JudgeSample.kind, func.max(JudgeSample.position)).group_by(JudgeSample.kind)).all()
        )
        for kind, sample in built:
            if sample.id in existing or (kind == "pair" and sample.task in tasks_with_pairs):
                continue  # a task's pairs are drawn once; later responses do not redraw them
            top[kind] = top.get(kind, -1) + 1
            s.add(
                JudgeSample(id=sample.id, kind=kind, position=top[kind], task=sample.task, payload=sample.model_dump())
            )
            added[kind] += 1
    return added


def samples(ws: Workspace, kind: str) -> list[ScoreSample] | list[PairSample]:
    model = ScoreSample if kind == "score" else PairSample
    with ws.session() as s:
        rows = s.execute(
            select(JudgeSample.payload).where(JudgeSample.kind == kind).order_by(JudgeSample.position)
        ).scalars()
        return [model.model_construct(**p) for p in rows]  # type: ignore[return-value]


def sample_row(ws: Workspace, sample_id: str) -> JudgeSample:
    with ws.session() as s:
        row = s.get(JudgeSample, sample_id)
    if row is None:
        raise NotFoundError(f"no judging sample {sample_id!r}")
    return row


def next_sample(ws: Workspace, person: str, kind: str, after: int | None = None) -> JudgeSample | None:
    """The next sample to serve ``person``: still short of its annotators, not yet applied by them, after
    ``after`` (default: where they last applied), wrapping round to the start once. An index walk from the
    cursor: the time does not grow with the number of samples."""
    quota = ws.settings.judge.annotators_per_sample
    with ws.session() as s:
        if after is None:
            cursor = s.get(JudgeCursor, (person, kind))
            after = -1 if cursor is None else cursor.position
        mine = exists().where(
            and_(JudgeAnnotation.sample == JudgeSample.id, JudgeAnnotation.annotator == person, JudgeAnnotation.applied)
        )
        base = select(JudgeSample).where(JudgeSample.kind == kind, JudgeSample.applied < quota, ~mine)
        for lower in (after, -1):
            row = s.execute(base.where(JudgeSample.position > lower).order_by(JudgeSample.position).limit(1)).scalar()
            if row is not None:
                return row
    return None


def previous_sample(ws: Workspace, person: str, kind: str, before: int) -> JudgeSample | None:
    """The sample shown before ``before`` in serving order that this person may see: one they annotated, or
    one still open to them."""
    quota = ws.settings.judge.annotators_per_sample
    with ws.session() as s:
        mine = exists().where(and_(JudgeAnnotation.sample == JudgeSample.id, JudgeAnnotation.annotator == person))
        return s.execute(
            select(JudgeSample)
            .where(JudgeSample.kind == kind, JudgeSample.position < before, mine | (JudgeSample.applied < quota))
            .order_by(JudgeSample.position.desc())  # type: ignore[attr-defined]
            .limit(1)
        ).scalar()


def sample_seen(ws: Workspace, sample_id: str) -> str:
    """The content hash of a sample as its page shows it (what an Apply names as ``seen``)."""
    with ws.session() as s:
        sample = s.get(JudgeSample, sample_id)
        if sample is None:
            raise NotFoundError(f"no judging sample {sample_id!r}")
        return sample_content(s, sample)


def annotation(ws: Workspace, sample_id: str, person: str) -> JudgeAnnotation | None:
    with ws.session() as s:
        return s.execute(
            select(JudgeAnnotation).where(JudgeAnnotation.sample == sample_id, JudgeAnnotation.annotator == person)
        ).scalar_one_or_none()


def _validated(kind: str, sample_id: str, person: str, values: dict[str, Any]) -> BaseModel:
    if kind == "score":
        return ScoreAnnotation(sample=sample_id, annotator=person, scores=values)
    return PairAnnotation(sample=sample_id, annotator=person, choices=values)


def save_annotation(
    ws: Workspace, sample_id: str, person: str, values: dict[str, Any], apply: bool, seen: str | None = None
) -> JudgeAnnotation:
    """Keep a draft (``apply=False``: Previous/Next) or apply it; applying needs a value for every criterion.

    A sample that already has its annotators is refused to a newcomer (another person applied first); an
    application naming the content it was made on (``seen``, :func:`sample_seen`) is refused as
    ``stale:<kind>_annotation`` when that changed since.
    """
    with ws.writing() as s:
        row = _save(s, ws.settings.judge.annotators_per_sample, sample_id, person, values, apply, seen=seen)
        s.flush()
        s.expunge(row)
    return row


def _save(  # type: ignore[no-untyped-def]
    s,
    quota: int,
    sample_id: str,
    person: str,
    values: dict[str, Any],
    apply: bool,
    via: str | None = None,
    seen: str | None = None,
) -> JudgeAnnotation:
    """The one path every annotation takes (the app's pages, imports, Label Studio pulls). Every check comes
    before the first change, so a refusal leaves the session as it was."""
    from .rubrics import CRITERIA

    sample = s.get(JudgeSample, sample_id)
    if sample is None:
        raise NotFoundError(f"no judging sample {sample_id!r}")
    _require_annotator(s, person)
    if apply:
        refuse_if_stale(seen, sample_content(s, sample), f"{sample.kind}_annotation", f"sample {sample_id}")
    owner = s.execute(select(JudgeTask.created_by).where(JudgeTask.id == sample.task)).scalar_one()
    if owner == person:
        raise PermissionDenied(f"{person!r} imported task {sample.task}: nobody annotates samples of their own task")
    clean = {k: v for k, v in values.items() if v is not None}
    parsed = _validated(sample.kind, sample_id, person, clean)
    missing = [c for c in CRITERIA if c not in clean]
    if apply and missing:
        raise ValidationFailed([Problem(f"no value for {', '.join(missing)}", "values")], "nothing was applied")
    row = s.execute(
        select(JudgeAnnotation).where(JudgeAnnotation.sample == sample_id, JudgeAnnotation.annotator == person)
    ).scalar_one_or_none()
    was_applied = row is not None and row.applied
    if apply and not was_applied and sample.applied >= quota:
        raise ValidationFailed(
            [Problem(f"sample {sample_id} already has its {sample.applied} annotators", "sample")],
            "nothing was applied",
        )
    payload = parsed.model_dump(mode="json", exclude={"sample", "annotator"})
    if row is None:
        row = JudgeAnnotation(sample=sample_id, annotator=person, payload=payload, applied=apply)
    else:
        row.payload, row.updated_at = payload, utcnow()
        row.applied = row.applied or apply
    s.add(row)
    if apply:
        if not was_applied:
            sample.applied += 1  # the write transaction is serialized: no other writer counts meanwhile
            s.add(sample)
        cursor = s.get(JudgeCursor, (person, sample.kind))
        if cursor is None:
            s.add(JudgeCursor(person=person, kind=sample.kind, position=sample.position))
        else:
            cursor.position = sample.position
            s.add(cursor)
        after = payload if via is None else {**payload, "via": via}
        record_event(s, person, f"judge.{sample.kind}_annotation", f"judge_sample:{sample_id}", None, after)
    return row


@dataclass(frozen=True)
class ExternalAnnotation:
    """An applied annotation made outside the app (a Label Studio annotation), for :func:`apply_external`."""

    sample: str
    person: str
    values: dict[str, Any]
    source: str
    """Where it was made, e.g. ``labelstudio:judge:score annotation 17``; kept in the event."""


@dataclass
class ExternalOutcome:
    recorded: list[ExternalAnnotation] = field(default_factory=list)
    replaced: list[ExternalAnnotation] = field(default_factory=list)
    unchanged: list[ExternalAnnotation] = field(default_factory=list)
    refused: list[tuple[ExternalAnnotation, str]] = field(default_factory=list)
    withdrawn: list[tuple[str, str]] = field(default_factory=list)


def apply_external(
    ws: Workspace,
    annotations: Sequence[ExternalAnnotation],
    owned: set[tuple[str, str]],
    withdraw: set[tuple[str, str]],
) -> ExternalOutcome:
    """Apply annotations made elsewhere, in one transaction, through the same checks as the app's Apply.

    ``owned``: the (sample, person) slots this source recorded before; a slot the person applied in the app
    (or through another source) is theirs already and the outside annotation is refused, so nobody annotates
    a sample twice. ``withdraw``: owned slots the source no longer backs (deleted, or edited and refused);
    their annotations are removed and the sample is open again. Annotations are taken in the order given:
    once a sample has its annotators, later ones are refused.
    """
    quota = ws.settings.judge.annotators_per_sample
    result = ExternalOutcome()
    with ws.writing() as s:
        for sample_id, person in sorted(withdraw):
            row = s.execute(
                select(JudgeAnnotation).where(JudgeAnnotation.sample == sample_id, JudgeAnnotation.annotator == person)
            ).scalar_one_or_none()
            if row is None:
                continue
            sample = s.get(JudgeSample, sample_id)
            if row.applied and sample is not None:
                sample.applied -= 1
                s.add(sample)
            record_event(
                s,
                person,
                "judge.annotation_withdrawn",
                f"judge_sample:{sample_id}",
                row.payload,
                {"reason": "its source no longer backs it"},
            )
            s.delete(row)
            result.withdrawn.append((sample_id, person))
        s.flush()
        for a in annotations:
            row = s.execute(
                select(JudgeAnnotation).where(JudgeAnnotation.sample == a.sample, JudgeAnnotation.annotator == a.person)
            ).scalar_one_or_none()
            if row is not None and (a.sample, a.person) not in owned:
                result.refused.append(
                    (a, f"{a.person} already annotated sample {a.sample} in the app: nobody annotates a sample twice")
                )
                continue
            before = None if row is None else dict(row.payload)
            try:  # _save checks everything before it changes anything
                saved = _save(s, quota, a.sample, a.person, a.values, apply=True, via=a.source)
            except (ValidationFailed, NotFoundError, PermissionDenied) as exc:
                result.refused.append((a, str(exc).splitlines()[0]))
                continue
            if before is None:
                result.recorded.append(a)
            elif before == saved.payload:
                result.unchanged.append(a)
            else:
                result.replaced.append(a)
    return result


def _require_annotator(s, name: str) -> None:  # type: ignore[no-untyped-def]
    person = s.get(Person, name)
    if person is None:
        raise NotFoundError(f"unknown person {name!r}")
    if not person.role_set & {"reviewer", "maintainer"}:
        raise PermissionDenied(f"{name!r} has neither the reviewer nor the maintainer role")


def progress(ws: Workspace, person: str, kind: str) -> dict[str, int]:
    quota = ws.settings.judge.annotators_per_sample
    with ws.session() as s:
        total = s.execute(select(func.count()).where(JudgeSample.kind == kind)).scalar_one()
        done = s.execute(
            select(func.count())
            .select_from(JudgeAnnotation)
            .join(JudgeSample, JudgeSample.id == JudgeAnnotation.sample)
            .where(JudgeSample.kind == kind, JudgeAnnotation.annotator == person, JudgeAnnotation.applied)
        ).scalar_one()
        full = s.execute(
            select(func.count()).where(JudgeSample.kind == kind, JudgeSample.applied >= quota)
        ).scalar_one()
    return {"samples": total, "mine": done, "complete": full}


# ---- bulk imports of annotations and judge outputs -----------------------------------------------------


def import_annotations(ws: Workspace, path: Path) -> int:
    """Import people's applied scores (``scores``) or choices (``choices``) per sample, e.g. from Label Studio."""
    file, problems = str(path), list[Problem]()
    lines: list[tuple[int, dict[str, Any]]] = []
    for number, raw in read_models(path, _AnnotationLine, problems):
        lines.append((number, raw.model_dump()))
    _refuse(problems, file)
    with ws.all_or_nothing():  # a refused line keeps nothing of the file
        for number, line in lines:
            try:
                values = line["scores"] or line["choices"] or {}
                save_annotation(ws, line["sample"], line["annotator"], values, apply=True)
            except (ValidationFailed, NotFoundError, PermissionDenied) as exc:
                raise ValidationFailed(
                    [Problem(str(exc).splitlines()[0], "sample", number, file)], "nothing was imported"
                ) from exc
    return len(lines)


class _AnnotationLine(BaseModel):
    """One line of an annotations file: unknown fields are refused, scores are checked strictly (schema.Score)."""

    model_config = ConfigDict(extra="forbid")
    sample: str
    annotator: str
    scores: dict[str, Score] | None = None
    choices: dict[str, Choice] | None = None


def import_judge_outputs(ws: Workspace, path: Path) -> ImportCounts:
    """Import judge outputs (several samples per criterion); a line for a stored (sample, judge) replaces it."""
    file, problems = str(path), list[Problem]()
    with ws.session() as s:
        kinds: dict[str, str] = dict(s.execute(select(JudgeSample.id, JudgeSample.kind)).all())
    rows: list[JudgeOutputLine] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in read_models(path, JudgeOutputLine, problems):
        key = (line.sample, line.judge)
        if key in seen:
            problems.append(
                Problem(
                    f"judge {line.judge} and sample {line.sample} given twice (line {seen[key]})",
                    "sample",
                    number,
                    file,
                )
            )
            continue
        seen[key] = number
        kind = kinds.get(line.sample)
        if kind is None:
            problems.append(
                Problem(
                    f"unknown sample {line.sample!r}; build samples first (`curate judge samples --json` lists them)",
                    "sample",
                    number,
                    file,
                )
            )
        elif (kind == "score") != (line.scores is not None):
            problems.append(
                Problem(f"a {kind} sample takes {'scores' if kind == 'score' else 'choices'}", "sample", number, file)
            )
        else:
            rows.append(line)
    _refuse(problems, file)
    counts = {"added": 0, "unchanged": 0}
    with ws.writing() as s:
        stored = {(o.sample, o.judge): o for o in s.execute(select(JudgeOutput)).scalars()}
        for line in rows:
            payload = line.model_dump(mode="json", exclude={"sample", "judge"}, exclude_none=True)
            old = stored.get((line.sample, line.judge))
            if old is None:
                s.add(JudgeOutput(sample=line.sample, judge=line.judge, payload=payload))
                counts["added"] += 1
            elif old.payload == payload:
                counts["unchanged"] += 1
            else:
                old.payload = payload
                s.add(old)
                counts["added"] += 1
    return ImportCounts(**counts)


# ---- the report ----------------------------------------------------------------------------------------


def report(ws: Workspace, settings: ReportSettings | None = None) -> dict[str, Any]:
    """The judge-vs-human report over applied annotations and imported judge outputs."""
    cfg = ws.settings.judge
    settings = settings or ReportSettings(judge_scores=cfg.judge_scores, bootstrap=cfg.bootstrap)
    with ws.session() as s:
        rows = s.execute(
            select(JudgeAnnotation.sample, JudgeAnnotation.annotator, JudgeAnnotation.payload, JudgeSample.kind)
            .join(JudgeSample, JudgeSample.id == JudgeAnnotation.sample)
            .where(JudgeAnnotation.applied)
        ).all()
        outputs = [  # validated when imported: constructed here, not validated again
            JudgeOutputLine.model_construct(sample=sample, judge=judge, **payload)
            for sample, judge, payload in s.execute(select(JudgeOutput.sample, JudgeOutput.judge, JudgeOutput.payload))
        ]
    score_annotations = [
        ScoreAnnotation.model_construct(sample=r[0], annotator=r[1], **r[2]) for r in rows if r[3] == "score"
    ]
    pair_annotations = [
        PairAnnotation.model_construct(sample=r[0], annotator=r[1], **r[2]) for r in rows if r[3] == "pair"
    ]
    return judge_report(
        samples(ws, "score"),
        score_annotations,
        samples(ws, "pair"),
        pair_annotations,
        outputs,
        settings,
    )


# ---- stage records from a file -------------------------------------------------------------------------

_RECORD_ORDER = ("checklist_curation", "checklist_crosscheck", ADJUDICATION, "response_review")


def import_records(ws: Workspace, path: Path) -> dict[str, int]:
    """Import stage records (checklist curation, cross-check, adjudication, response review).

    Every line is checked against its schema first (all problems at once, nothing recorded). Records are
    then applied stage by stage in one transaction; one that breaks a rule (bounds, separation) refuses the
    import with its line named, and nothing of the file is kept.
    """
    from pydantic import ValidationError

    from curation.jsonl import pydantic_problems, read_jsonl

    file, problems = str(path), list[Problem]()
    models: dict[str, type[BaseModel]] = {
        "checklist_curation": ChecklistSelectionRecord,
        "checklist_crosscheck": ChecklistSelectionRecord,
        ADJUDICATION: ChecklistAdjudicationRecord,
        "response_review": ResponseReviewRecord,
    }
    parsed: list[tuple[int, str, BaseModel]] = []
    first: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}
    for number, obj in read_jsonl(path):
        if isinstance(obj, Problem):
            problems.append(obj)
            continue
        stage = obj.get("stage")
        if stage not in models:
            problems.append(Problem(f"unknown stage {stage!r}; stages are {', '.join(models)}", "stage", number, file))
            continue
        data = {k: v for k, v in obj.items() if not (stage == ADJUDICATION and k == "stage")}
        try:
            record = models[stage].model_validate(data)
        except ValidationError as exc:
            problems += pydantic_problems(exc, file, number)
            continue
        subject = getattr(record, "task", None) or getattr(record, "response", None)
        key = (subject, stage, getattr(record, "reviewer", None) or getattr(record, "adjudicator", None))
        earlier = first.setdefault(key, (number, record.model_dump()))
        if earlier[0] != number and earlier[1] != record.model_dump():  # the later would win silently
            message = f"contradicts line {earlier[0]} (same {subject}, stage and reviewer); keep one of the two"
            problems.append(Problem(message, "reviewer", number, file))
            continue
        parsed.append((number, stage, record))
    _refuse(problems, file)
    counts = dict.fromkeys(_RECORD_ORDER, 0)
    with ws.all_or_nothing():  # a refused line keeps nothing of the file
        for number, stage, record in sorted(parsed, key=lambda p: (_RECORD_ORDER.index(p[1]), p[0])):
            try:
                if stage == ADJUDICATION:
                    record_adjudication(ws, record)
                elif stage == "response_review":
                    record_response_review(ws, record)
                else:
                    record_selection(ws, record)
            except (ValidationFailed, NotFoundError, PermissionDenied) as exc:
                message = exc.problems[0].message if isinstance(exc, ValidationFailed) else str(exc)
                raise ValidationFailed([Problem(message, stage, number, file)], "nothing was imported") from exc
            counts[stage] += 1
    return counts


# ---- where each task stands (curate status / funnel) ---------------------------------------------------

JUDGE_STAGES = ("checklist_curation", "checklist_crosscheck", "response_review")


def task_status(ws: Workspace) -> list[dict[str, Any]]:
    """One row per task, shaped like ``curate status --json`` rows: a task waits at a checklist stage, is
    held while its curator and cross-checker disagree (``checklist:disagreement``, until adjudicated),
    waits at ``response_review`` while a response is unreviewed, and is admitted with a final checklist and
    at least one usable response (``responses:none_usable`` holds it otherwise)."""
    reviews = response_reviews(ws)
    by_task: dict[str, list[str]] = {}
    for r in responses(ws):
        by_task.setdefault(r.task, []).append(r.id)
    rows = []
    for checklist in task_checklists(ws):
        state, stage, reasons = "in_review", None, []
        if checklist.state == "drafted":
            stage = "checklist_curation"
        elif checklist.state == "curated":
            stage = "checklist_crosscheck"
        elif checklist.state == "disagreement":
            state, reasons = "held", ["checklist:disagreement"]
        else:
            mine = by_task.get(checklist.task, [])
            if not mine or any(not reviews.get(r) for r in mine):
                stage = "response_review"
            elif any(all(v.usable and not v.nsfw for v in reviews[r]) for r in mine):
                state = "admitted"
            else:
                state, reasons = "held", ["responses:none_usable"]
        rows.append(
            {
                "id": checklist.task,
                "group": checklist.task,
                "kind": "judge_task",
                "state": state,
                "stage": stage,
                "reasons": reasons,
            }
        )
    return rows


def judge_statuses(ws: Workspace) -> list[Any]:
    """:func:`task_status` as the workflow's ``ItemStatus`` rows, for ``curate status`` and ``curate funnel``."""
    from curation.workflow import ItemStatus

    return [ItemStatus(r["id"], r["group"], r["state"], r["stage"], r["reasons"], r["kind"]) for r in task_status(ws)]


# ---- the duplicate audit of videos ---------------------------------------------------------------------

VIDEO_SIGNATURE_VERSION = 1


def video_duplicates(ws: Workspace, radius: int | None = None) -> dict[str, Any]:
    """Near-duplicate videos among tasks' inputs and responses, by keyframe perceptual hashes (cached per
    asset in ``media_signature``); pairs whose owners all belong to one task are left out, as every audit
    leaves out pairs within one group."""
    from curation.audit.tables import MediaSignature
    from curation.mediatools.video import KEYFRAME_RADIUS, keyframe_hashes, near_duplicate_videos

    owners: dict[str, set[str]] = {}
    for t in tasks(ws):
        for modality, sha in t.inputs.items():
            if modality == "video":
                owners.setdefault(sha, set()).add(t.id)
    for r in responses(ws):
        if r.modality == "video" and r.asset:
            owners.setdefault(r.asset, set()).add(r.task)
    with ws.session() as s:
        cached = {
            m.sha256: [int(h, 16) for h in m.data["keyframes"]]
            for m in s.execute(
                select(MediaSignature).where(
                    MediaSignature.kind == "video", MediaSignature.version == VIDEO_SIGNATURE_VERSION
                )
            ).scalars()
        }
        assets = {a.sha256: a for a in s.execute(select(Asset).where(Asset.kind == "video")).scalars()}
    fresh = {sha: keyframe_hashes(ws.asset_path(assets[sha])) for sha in owners if sha not in cached}
    if fresh:
        with ws.writing() as s:
            for sha, hashes in fresh.items():
                if s.get(MediaSignature, sha) is None:
                    data = {"keyframes": [f"{h:016x}" for h in hashes]}
                    s.add(MediaSignature(sha256=sha, kind="video", version=VIDEO_SIGNATURE_VERSION, data=data))
    signatures = {sha: cached.get(sha) or fresh[sha] for sha in owners}
    pairs = []
    for a, b, distance in near_duplicate_videos(signatures, KEYFRAME_RADIUS if radius is None else radius):
        if len(owners[a] | owners[b]) == 1:
            continue  # within one task (an edit of its own input, say)
        pairs.append({"a": a, "b": b, "tasks": sorted(owners[a] | owners[b]), "distance": distance})
    return {"videos": len(signatures), "computed": len(fresh), "pairs": pairs}
