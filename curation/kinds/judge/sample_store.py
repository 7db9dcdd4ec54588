# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""Score and pair samples: built from the usable responses of tasks with a final checklist, and served
to annotators in order, each until it has its annotators."""

from __future__ import annotations

from sqlalchemy import and_, exists, func, select

from curation.errors import NotFoundError
from curation.workspace import Workspace

from .record_store import task_checklists, usable_responses
from .samples import pair_samples, score_samples
from .schema import PairSample, ScoreSample
from .seen import sample_content
from .tables import JudgeAnnotation, JudgeCursor, JudgeSample
from .task_store import tasks


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
