# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""People's annotations of samples: drafts and applications from the app, annotations made elsewhere
(Label Studio) and files of them, all through one path with the same checks and separation."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError, field_validator, model_validator
from sqlalchemy import func, select

from curation.errors import NotFoundError, PermissionDenied, Problem, ValidationFailed
from curation.jsonl import pydantic_problems, read_models
from curation.schema import Identifier
from curation.tables import Person, utcnow
from curation.workspace import Workspace, record_event

from .importing import _refuse
from .rubrics import CRITERIA
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
        raise NotFoundError(f"unknown person {name!r}; `curate people list` lists the people")
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


def import_annotations(ws: Workspace, path: Path) -> dict[str, int]:
    """Import people's applied scores (``scores``) or choices (``choices``) per sample, e.g. from Label Studio.

    Every line is checked first (its fields, its sample and its person, a second different annotation of one
    sample by one person), all problems at once as FILE:LINE; then every line is applied in one transaction,
    through the same rules as the app, and a refused line keeps nothing of the file. A line already applied
    with the same values is left as it is: the counts say ``applied`` (new or changed) and ``unchanged``."""
    file, problems = str(path), list[Problem]()
    lines: list[tuple[int, AnnotationLine]] = []
    first: dict[tuple[str, str], tuple[int, AnnotationLine]] = {}
    for number, line in read_models(path, AnnotationLine, problems):
        earlier = first.setdefault((line.sample, line.annotator), (number, line))
        if earlier[0] == number:
            lines.append((number, line))
        elif earlier[1] != line:  # the later would silently replace the earlier
            message = (
                f"a second, different annotation of sample {line.sample} by {line.annotator} (the first is on line "
                f"{earlier[0]}); keep one of the two"
            )
            problems.append(Problem(message, "annotator", number, file))
    problems += _unknown_subjects(ws, lines, file)
    _refuse(problems, file)
    stored = _applied_payloads(ws, [line for _, line in lines])
    counts = {"applied": 0, "unchanged": 0}
    with ws.all_or_nothing():  # a refused line keeps nothing of the file
        for number, line in lines:
            values: dict[str, Any] = dict(line.scores or line.choices or {})
            if _same_as_stored(stored.get((line.sample, line.annotator)), line, values):
                counts["unchanged"] += 1
                continue
            counts["applied"] += 1
            try:
                save_annotation(ws, line.sample, line.annotator, values, apply=True)
            except ValidationError as exc:  # the line's own model checked it already: a second guard
                raise ValidationFailed(pydantic_problems(exc, file, number), "nothing was imported") from exc
            except ValidationFailed as exc:
                given = "scores" if line.scores is not None else "choices"
                located = [
                    Problem(found.message, given if found.field == "values" else found.field or "sample", number, file)
                    for found in exc.problems
                ]
                raise ValidationFailed(located, "nothing was imported") from exc
            except (NotFoundError, PermissionDenied) as exc:
                raise ValidationFailed([Problem(str(exc), "annotator", number, file)], "nothing was imported") from exc
    return counts


def _applied_payloads(ws: Workspace, lines: list[AnnotationLine]) -> dict[tuple[str, str], tuple[str, Any]]:
    """The applied annotations of the lines' (sample, person) pairs, with their sample's kind."""
    samples = {line.sample for line in lines}
    with ws.session() as s:
        rows = s.execute(
            select(JudgeAnnotation.sample, JudgeAnnotation.annotator, JudgeAnnotation.payload, JudgeSample.kind)
            .join(JudgeSample, JudgeSample.id == JudgeAnnotation.sample)
            .where(JudgeAnnotation.applied, JudgeAnnotation.sample.in_(samples))  # type: ignore[attr-defined]
        ).all()
    return {(sample, person): (kind, payload) for sample, person, payload, kind in rows}


def _same_as_stored(stored: tuple[str, Any] | None, line: AnnotationLine, values: dict[str, Any]) -> bool:
    """Whether an applied annotation already holds exactly these values (re-importing it changes nothing)."""
    if stored is None:
        return False
    kind, payload = stored
    clean = {k: v for k, v in values.items() if v is not None}
    try:
        given = _validated(kind, line.sample, line.annotator, clean)
    except ValidationError:
        return False  # the save path refuses it with its line number
    return bool(given.model_dump(mode="json", exclude={"sample", "annotator"}) == payload)


def _unknown_subjects(ws: Workspace, lines: list[tuple[int, AnnotationLine]], file: str) -> list[Problem]:
    """Lines naming a sample or a person the workspace does not have, or giving scores to a pair sample
    (choices to a score sample)."""
    with ws.session() as s:
        kinds: dict[str, str] = {row[0]: row[1] for row in s.execute(select(JudgeSample.id, JudgeSample.kind))}
        people = set(s.execute(select(Person.name)).scalars())
    problems = []
    for number, line in lines:
        kind = kinds.get(line.sample)
        if kind is None:
            message = f"no judging sample {line.sample}; list them with `curate judge samples`"
            problems.append(Problem(message, "sample", number, file))
        elif kind == "score" and line.scores is None:
            message = f'sample {line.sample} is a score sample: give "scores" (1 to 5 per criterion), not "choices"'
            problems.append(Problem(message, "choices", number, file))
        elif kind == "pair" and line.choices is None:
            message = (
                f'sample {line.sample} is a pair sample: give "choices" (first, second or tie per criterion), '
                'not "scores"'
            )
            problems.append(Problem(message, "scores", number, file))
        if line.annotator not in people:
            message = (
                f"unknown person {line.annotator}; add them with `curate people add {line.annotator} --role reviewer`"
            )
            problems.append(Problem(message, "annotator", number, file))
    return problems


class AnnotationLine(BaseModel):
    """One line of an annotations file (``curate judge import annotations``): a person's applied annotation of
    one sample, ``scores`` (a whole number 1-5 per criterion) for a score sample or ``choices`` (``first``,
    ``second`` or ``tie`` per criterion) for a pair sample, with a value for every criterion. Strict: ``true``,
    ``"4"`` and ``3.0`` are refused, never coerced; unknown fields are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)
    sample: Annotated[str, StringConstraints(min_length=1, max_length=1000, pattern=r"^[A-Za-z0-9._:~\-]+$")]
    """A sample id as `curate judge samples --json` lists it (``s:TASK:SYSTEM``, ``p:TASK:FIRST~SECOND``)."""
    annotator: Identifier
    scores: dict[str, Score] | None = None
    choices: dict[str, Choice] | None = None

    @field_validator("scores", "choices", mode="before")
    @classmethod
    def _known_criteria(cls, given: Any) -> Any:
        """Keys first, so that a problem never names a field by a key that holds a line break."""
        unknown = [c for c in given if c not in CRITERIA] if isinstance(given, dict) else []
        if unknown:
            named = ", ".join(json.dumps(c, ensure_ascii=False) for c in unknown)
            raise ValueError(f"unknown criterion {named}; criteria are {', '.join(CRITERIA)}")
        return given

    @field_validator("scores", "choices")
    @classmethod
    def _every_criterion(cls, given: dict[str, Any] | None) -> dict[str, Any] | None:
        missing = [c for c in CRITERIA if given is not None and c not in given]
        if missing:
            raise ValueError(f"no value for {', '.join(missing)}: an applied annotation gives every criterion")
        return given

    @model_validator(mode="after")
    def _one_kind(self) -> AnnotationLine:
        if (self.scores is None) == (self.choices is None):
            raise ValueError('give either "scores" (a score sample) or "choices" (a pair sample)')
        return self
