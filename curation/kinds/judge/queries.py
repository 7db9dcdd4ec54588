"""Query curation (Judge Anything §2.1): candidate queries selected from existing benchmarks are imported,
audited (exact and near-duplicate queries, shared media), screened (keep, or drop as ``nsfw``,
``low_quality`` or ``out_of_scope``) and refined (each edit a revision with who and why), then promoted to
judge tasks, which checklist drafting starts from.

Where a query stands is derived from its records, like every stage: ``held`` by an audit reason
(``duplicate:query``, ``duplicate:near_query``, ``duplicate:media``; the first query of a cluster, by id, is
the one kept), ``screen`` while nobody screened it, ``dropped`` (``screen:<reason>``), ``ready``, or
``promoted`` once it is a task.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError, model_validator
from sqlalchemy import select
from sqlmodel import col

from curation.audit.text import near_duplicate_pairs, shingles, text_key, words
from curation.errors import NotFoundError, PermissionDenied, Problem, ValidationFailed
from curation.jsonl import pydantic_problems, read_jsonl, read_models
from curation.media import sha256_file
from curation.tables import Event, Person
from curation.workspace import Workspace, record_event

from .caption_draw_tables import JudgeQueryDraw
from .importing import _Media, _refuse, _transaction, content_hash, read_task_lines, store_new_lines
from .query_draw import DrawSpec, draw, licence_hold
from .query_tables import JudgeQuery
from .schema import MEDIA_MODALITIES, Identifier, NonEmpty, TaskLine, _Strict, modality_pair
from .tables import JudgeRecord, JudgeTask

SCREEN_REASONS = ("nsfw", "low_quality", "out_of_scope")
"""Why a screener drops a query (the paper filters NSFW and low-quality queries, and those outside the task)."""
DUPLICATE_QUERY, NEAR_QUERY, SHARED_MEDIA = "duplicate:query", "duplicate:near_query", "duplicate:media"
AUDIT_REASONS = (DUPLICATE_QUERY, NEAR_QUERY, SHARED_MEDIA)
"""The audit's reason codes (each listed, with what to do, in ``curation.reasons``)."""
NEAR_DUPLICATE = 0.8
"""Word-shingle Jaccard at or above which two queries with the same inputs are near duplicates."""


class QueryScreenRecord(_Strict):
    """Stage ``query_screen``: keep the query, or drop it with a reason code."""

    query: Identifier
    stage: Literal["query_screen"] = "query_screen"
    reviewer: Identifier
    decision: Literal["keep", "drop"]
    reason: Literal["nsfw", "low_quality", "out_of_scope"] | None = None
    note: str = ""

    @model_validator(mode="after")
    def _reason_with_drop(self) -> QueryScreenRecord:
        if self.decision == "drop" and self.reason is None:
            raise ValueError(f"a dropped query needs a reason: {', '.join(SCREEN_REASONS)}")
        if self.decision == "keep" and self.reason is not None:
            raise ValueError("a kept query has no drop reason")
        return self


class QueryRefineRecord(_Strict):
    """Stage ``query_refine``: a new wording of the instruction, and why."""

    query: Identifier
    stage: Literal["query_refine"] = "query_refine"
    reviewer: Identifier
    instruction: NonEmpty
    why: NonEmpty


@dataclass
class QueryStatus:
    id: str
    state: str
    reasons: list[str] = field(default_factory=list)
    task: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "state": self.state, "reasons": self.reasons, "task": self.task}


def import_queries(
    ws: Workspace, path: Path, actor: str = "cli", spec: DrawSpec | None = None, named: str | None = None
) -> dict[str, Any]:
    """Import candidate query lines (the task line format); all problems at once, nothing imported on any.

    A query whose licence is not open is imported held by name (:mod:`.query_draw`); with ``spec`` only a
    seeded draw of the open-licence queries (and the held ones) is imported, and the draw is recorded with
    the file (``named``: the user's file, when ``path`` is lines made from it) and its hash."""
    ws.recover_media()
    media = _Media(ws)
    accepted = ws.settings.licences.accepted()
    drawn = None
    if spec is not None:
        drawn = draw((line for _, line in read_models(path, TaskLine, [])), accepted, spec)
    keep = None if drawn is None else {*drawn.drawn, *(h["id"] for h in drawn.held)}
    rows = read_task_lines(path, media, hold_licences=True, keep=keep)
    counts: dict[str, Any] = {}

    def build(line: TaskLine, inputs: dict[str, str], digest: str) -> JudgeQuery:
        return JudgeQuery(
            id=line.id,
            instruction=line.instruction,
            original=line.instruction,
            inputs=inputs,
            output=line.output,
            source=line.source,
            license=line.license,
            content_hash=digest,
            created_by=actor,
        )

    def write(session: Any) -> None:
        found = store_new_lines(
            session, JudgeQuery, rows, build, exclude={"inputs", "kind"}, noun="query", event="judge.query.import",
            file=str(path), actor=actor,
        )  # fmt: skip
        counts.update(found)
        if drawn is not None and spec is not None:
            record = JudgeQueryDraw(
                file=named or str(path), file_sha256=sha256_file(path), seed=spec.seed, per_task=spec.per_task,
                per_source=spec.per_source, eligible=drawn.eligible, drawn=drawn.drawn, held=drawn.held,
                created_by=actor,
            )  # fmt: skip
            session.add(record)
            record_event(session, actor, "judge.query.draw", f"judge_query_draw:{record.file}", None,
                         {"seed": spec.seed, "per_task": spec.per_task, "per_source": spec.per_source,
                          "eligible": drawn.eligible, "drawn": len(drawn.drawn)})  # fmt: skip
            counts["draw"] = {"seed": spec.seed, "per_task": spec.per_task, "per_source": spec.per_source,
                              "eligible": drawn.eligible, "drawn": drawn.drawn}  # fmt: skip
        held = [{"id": line.id, "license": line.license} for _, line, _ in rows if licence_hold(line.license, accepted)]
        if held:
            counts["held_for_licence"] = held

    _transaction(ws, media, write)
    return counts


def query_draws(ws: Workspace) -> list[JudgeQueryDraw]:
    """Every recorded draw, oldest first."""
    with ws.session() as s:
        return list(s.execute(select(JudgeQueryDraw).order_by(col(JudgeQueryDraw.id))).scalars())


def queries(ws: Workspace) -> list[JudgeQuery]:
    with ws.session() as s:
        return list(s.execute(select(JudgeQuery).order_by(col(JudgeQuery.id))).scalars())


def audit_queries(ws: Workspace, threshold: float = NEAR_DUPLICATE) -> dict[str, list[str]]:
    """Audit reason codes per query: a later query (by id) repeating an earlier one's words (exact after
    normalising, or near with the same input media), or an input medium of an earlier query or task."""
    found: dict[str, list[str]] = {}
    rows = queries(ws)
    with ws.session() as s:
        task_media = {sha for t in s.execute(select(JudgeTask)).scalars() for sha in t.inputs.values()}
    first_text: dict[tuple[str, str], str] = {}
    first_media: dict[str, str] = {}
    for q in rows:
        media = ",".join(sorted(q.inputs.values()))
        key = (text_key(q.instruction), media)
        if key in first_text:
            found.setdefault(q.id, []).append(DUPLICATE_QUERY)
        first_text.setdefault(key, q.id)
        for sha in sorted(q.inputs.values()):
            if sha in task_media or first_media.setdefault(sha, q.id) != q.id:
                found.setdefault(q.id, []).append(SHARED_MEDIA)
                break
    sets = [shingles(words(q.instruction)) for q in rows]
    groups: dict[str, int] = {}
    owner = [groups.setdefault(",".join(sorted(q.inputs.values())), len(groups)) for q in rows]
    for i, j, _ in near_duplicate_pairs(sets, threshold):
        if owner[i] == owner[j]:  # the same inputs: the words alone differ a little
            later = rows[max(i, j)].id
            if DUPLICATE_QUERY not in found.get(later, []):
                found.setdefault(later, []).append(NEAR_QUERY)
    return {q: sorted(set(r)) for q, r in sorted(found.items())}


def query_statuses(ws: Workspace) -> list[QueryStatus]:
    """Where each candidate query stands (see the module's docstring); a licence that is not open holds it."""
    audits = audit_queries(ws)
    accepted = ws.settings.licences.accepted()
    for q in queries(ws):
        if why := licence_hold(q.license, accepted):
            audits[q.id] = [why, *audits.get(q.id, [])]
    with ws.session() as s:
        screens = {
            r.subject: r.payload
            for r in s.execute(select(JudgeRecord).where(col(JudgeRecord.stage) == "query_screen")).scalars()
        }
    out = []
    for q in queries(ws):
        screen = screens.get(q.id)
        if q.task is not None:
            out.append(QueryStatus(q.id, "promoted", task=q.task))
        elif q.id in audits:
            out.append(QueryStatus(q.id, "held", audits[q.id]))
        elif screen is None:
            out.append(QueryStatus(q.id, "screen"))
        elif screen["decision"] == "drop":
            out.append(QueryStatus(q.id, "dropped", [f"screen:{screen['reason']}"]))
        else:
            out.append(QueryStatus(q.id, "ready"))
    return out


def _put(s, record: QueryScreenRecord | QueryRefineRecord, why: str | None = None) -> None:  # type: ignore[no-untyped-def]
    person = s.get(Person, record.reviewer)
    if person is None:
        raise NotFoundError(f"unknown person {record.reviewer!r}; add them with `curate people add`")
    if not person.role_set & {"reviewer", "maintainer"}:
        raise PermissionDenied(f"{record.reviewer!r} has neither the reviewer nor the maintainer role")
    query = s.get(JudgeQuery, record.query)
    if query is None:
        raise NotFoundError(f"no query {record.query!r}; import it with `curate judge import queries`")
    if query.task is not None:
        raise ValidationFailed([Problem(f"query {query.id} is already task {query.task}", "query")])
    payload = record.model_dump(mode="json")
    if isinstance(record, QueryRefineRecord):
        if record.instruction == query.instruction:
            return
        before = {"instruction": query.instruction, "revision": query.revision}
        query.instruction, query.revision = record.instruction, query.revision + 1
        s.add(query)
        after = {"instruction": query.instruction, "revision": query.revision, "why": record.why}
        record_event(s, record.reviewer, "judge.query_refine", f"judge_query:{query.id}", before, after)
    row = s.execute(
        select(JudgeRecord).where(
            col(JudgeRecord.subject) == record.query,
            col(JudgeRecord.stage) == record.stage,
            col(JudgeRecord.reviewer) == record.reviewer,
        )
    ).scalar_one_or_none()
    if row is None:
        s.add(JudgeRecord(subject=record.query, stage=record.stage, reviewer=record.reviewer, payload=payload))
    elif row.payload != payload:
        row.payload = payload
        s.add(row)
    else:
        return
    if isinstance(record, QueryScreenRecord):
        record_event(s, record.reviewer, "judge.query_screen", f"judge_query:{query.id}", None, payload)


def record_query(ws: Workspace, *records: QueryScreenRecord | QueryRefineRecord) -> None:
    """Record screening decisions and refinements (the page's way in) in one transaction."""
    with ws.writing() as s:
        for record in records:
            _put(s, record)


def import_query_records(ws: Workspace, path: Path) -> dict[str, int]:
    """Screening and refinement records (JSONL); every line is checked first, then all land in one transaction."""
    file, problems = str(path), list[Problem]()
    models: dict[str, type[QueryScreenRecord] | type[QueryRefineRecord]] = {
        "query_screen": QueryScreenRecord,
        "query_refine": QueryRefineRecord,
    }
    parsed: list[tuple[int, QueryScreenRecord | QueryRefineRecord]] = []
    for number, obj in read_jsonl(path):
        if isinstance(obj, Problem):
            problems.append(obj)
            continue
        stage = obj.get("stage")
        if stage not in models:
            problems.append(Problem(f"unknown stage {stage!r}; stages are {', '.join(models)}", "stage", number, file))
            continue
        try:
            parsed.append((number, models[stage].model_validate(obj)))
        except ValidationError as exc:
            problems += pydantic_problems(exc, file, number)
    _refuse(problems, file)
    counts = dict.fromkeys(models, 0)
    with ws.writing() as s:
        for number, record in parsed:
            try:
                _put(s, record)
            except (ValidationFailed, NotFoundError, PermissionDenied) as exc:
                message = exc.problems[0].message if isinstance(exc, ValidationFailed) else str(exc)
                raise ValidationFailed([Problem(message, record.stage, number, file)], "nothing was recorded") from exc
            counts[record.stage] += 1
    return counts


def query_revisions(ws: Workspace, query_id: str) -> list[dict[str, Any]]:
    """Every refinement of a query in order: who, when, the wording before and after, and why."""
    with ws.session() as s:
        events = s.execute(
            select(Event)
            .where(col(Event.subject) == f"judge_query:{query_id}", col(Event.action) == "judge.query_refine")
            .order_by(col(Event.id))
        ).scalars()
        return [
            {"by": e.actor, "at": e.at.isoformat(), "before": e.before["instruction"], **e.after}
            for e in events
            if e.before and e.after
        ]


def promote_queries(ws: Workspace, actor: str = "cli") -> dict[str, int]:
    """Ready queries become judge tasks (id, refined instruction, inputs, output, source, licence), owned by
    whoever imported the query; a second run adds nothing."""
    ready = {st.id for st in query_statuses(ws) if st.state == "ready"}
    added = 0
    with ws.writing() as s:
        for q in s.execute(select(JudgeQuery).where(col(JudgeQuery.id).in_(ready))).scalars():
            if s.get(JudgeTask, q.id) is not None:
                raise ValidationFailed([Problem(f"a task {q.id!r} exists already; rename the query", "query")])
            data = {
                "id": q.id,
                "instruction": q.instruction,
                "output": q.output,
                "source": q.source,
                "license": q.license,
                "inputs": q.inputs,
            }
            digest = content_hash({**data, "kind": "judge_task"})  # as `judge import tasks` hashes a task line
            task = JudgeTask(
                **data,
                modality_pair=modality_pair(("text", *(m for m in MEDIA_MODALITIES if m in q.inputs)), q.output),
                content_hash=digest,
                created_by=q.created_by,
            )
            s.add(task)
            q.task = q.id
            s.add(q)
            record_event(s, actor, "judge.query.promote", f"judge_task:{q.id}", None, {**data, "query": q.id})
            added += 1
    return {"promoted": added}


def draw_record(draw: JudgeQueryDraw) -> dict[str, Any]:
    """A recorded draw as a release states it: the file's name (its folder is the importer's machine's), its
    sha256, the seed and quotas, how many queries were eligible, the ids drawn and those held for their licence."""
    return {
        "file": Path(draw.file).name,
        "file_sha256": draw.file_sha256,
        "seed": draw.seed,
        "per_task": draw.per_task,
        "per_source": draw.per_source,
        "eligible": draw.eligible,
        "drawn": draw.drawn,
        "held": draw.held,
    }


def curation_summary(ws: Workspace) -> dict[str, Any]:
    """How the candidate queries fared, for a release's admission record: counts by state and by reason, and
    every seeded draw the imports recorded (oldest first; none when the queries were imported whole)."""
    statuses = query_statuses(ws)
    states: Counter[str] = Counter(s.state for s in statuses)
    reasons: Counter[str] = Counter(r for s in statuses for r in s.reasons)
    return {
        "candidates": len(statuses),
        "states": dict(sorted(states.items())),
        "reasons": dict(sorted(reasons.items())),
        "draws": [draw_record(d) for d in query_draws(ws)],
    }
