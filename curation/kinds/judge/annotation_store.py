# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""People's annotations of samples: drafts and applications from the app, annotations made elsewhere
(Label Studio) and files of them, all through one path with the same checks and separation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import func, select

from curation.errors import NotFoundError, PermissionDenied, Problem, ValidationFailed
from curation.jsonl import read_models
from curation.tables import Person, utcnow
from curation.workspace import Workspace, record_event

from .importing import _refuse
from .schema import Choice, PairAnnotation, Score, ScoreAnnotation
from .seen import refuse_if_stale, sample_content
from .tables import JudgeAnnotation, JudgeCursor, JudgeSample, JudgeTask


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
