"""The lines of a release's ``admission/`` files as strict models: what ``release reproduce`` and ``release
verify`` read is checked here first, so that a damaged record is named by file and line (``FILE:LINE: field:
problem``), never met as a traceback in the middle of a re-derivation.

Types are strict (no string for a number, no bool for an id), unknown fields are refused, timestamps must be
ISO 8601, no id twice. A review record's payload is checked against its stage's own record model
(``Stage.record_model``): its shape always, the model's own rules (a drop needs a reason) only when the
re-derivation cannot use the record, since a record that breaks them is a difference the re-derivation reports.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from curation.errors import NotFoundError, Problem, ValidationFailed
from curation.jsonl import open_regular, parse_line, pydantic_problems, read_lines

from .exclusions import ExclusionLine

DAMAGED = "the release's admission record is damaged; nothing was re-derived"
Id = Field(min_length=1)


def _iso(value: str | None) -> str | None:
    if value is not None:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("not an ISO 8601 time (e.g. 2025-01-31T12:00:00)") from None
    return value


Time = Annotated[str | None, AfterValidator(_iso)]


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class UnitLine(_Line):
    id: str = Id
    group: str
    perturbed: str
    kind: str = Id
    modalities: list[str]
    author: str
    author_name: str | None = None
    revision: int = Field(ge=1)
    context: str
    question: str
    options: dict[str, str]
    answer: str
    image: str | None
    audio: str | None
    audio_source: str | None
    image_source: str | None
    extra: dict[str, Any]
    content_hash: str
    released: bool

    @field_validator("options")
    @classmethod
    def _option_keys(cls, value: dict[str, str]) -> dict[str, str]:
        from curation.vocab import OPTION_KEYS

        if sorted(value) != list(OPTION_KEYS[: len(value)]):
            raise ValueError(f"keys must be A, B, ... without a gap, not {', '.join(sorted(value))}")
        return value

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> UnitLine:
        if self.options and self.answer not in self.options:
            raise ValueError(f"answer {self.answer} is not one of the options ({', '.join(self.options)})")
        return self

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        from curation.kinds import kind_of

        try:
            kind_of(value)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
        return value


class RecordLine(_Line):
    id: int
    subject: str = Field(pattern=r"^(item|group):.+")
    stage: str = Id
    reviewer: str
    revision: int | None
    inputs_hash: str
    payload: dict[str, Any]
    at: Time


class DecisionLine(_Line):
    id: int | None
    item: str = Id
    kind: str
    stage: str | None
    verdict: str | None
    revision: int | None
    reason: str
    by: str
    at: Time


class GateLine(_Line):
    item: str = Id
    gate: str = Id
    content_hash: str
    reasons: list[str]
    mode: str
    verdict: str | None


class ExposureLine(_Line):
    item: str = Id
    person: str
    via: str
    at: Time


class OutcomeLine(_Line):
    id: str = Id
    state: str
    stage: str | None
    reasons: list[str]
    overrides: dict[str, Any]
    stages: dict[str, dict[str, Any]]


class ExposedBy(_Line):
    via: str
    at: Time


class AttestationLine(_Line):
    item: str = Id
    record: int
    reviewer: str
    blind: bool
    exposed_by: list[ExposedBy]


class ProbeLine(_Line):
    """One replay line (design.md, "Recorded probe output"): samples or probabilities per item and view."""

    item: str = Id
    view: str = Id
    samples: list[str] | None = None
    probs: dict[str, float] | None = None
    audio_route: str = "hidden"

    @model_validator(mode="after")
    def _one_form(self) -> ProbeLine:
        if (self.samples is None) == (self.probs is None):
            raise ValueError("give either samples or probs")
        return self


class TaskRecord(_Line):
    id: int
    stage: str = Id
    reviewer: str
    payload: dict[str, Any]


class FinalEntry(_Line):
    id: str
    rubric: str
    text: str


class TaskOutcome(_Line):
    state: str
    final: list[FinalEntry]
    disagreements: int


class TaskLine(_Line):
    """A judge release's task: its drafted candidates (checked as checklist entries when re-derived), its
    checklist-curation records and the checklist they derive."""

    task: str = Id
    released: bool
    candidates: list[dict[str, Any]]
    records: list[TaskRecord]
    outcome: TaskOutcome


class Platform(_Line):
    name: str
    version: str


class CheckerSettings(_Line):
    backend: str | None
    model: str | None
    estimator: str | None
    replay: str


class SettingsFile(_Line):
    """``admission/settings.json``: the rule settings are checked again by the workspace's own models."""

    format: str
    platform: Platform
    kind: str = Id
    review: dict[str, Any] | None = None
    agreement: dict[str, Any] | None = None
    gate_modes: dict[str, Literal["block", "warn", "off"]] | None = None
    checker: CheckerSettings | None = None
    pseudonyms: str
    authors: str | None = None
    rejected: str
    files: dict[str, str]

    @model_validator(mode="after")
    def _rules_given(self) -> SettingsFile:
        if self.kind != "judge_task":
            missing = [name for name in ("review", "agreement", "gate_modes") if getattr(self, name) is None]
            if missing:
                raise ValueError(f"a {self.kind} release's settings name {', '.join(missing)}")
        return self


MODELS: dict[str, type[_Line]] = {
    "units": UnitLine,
    "records": RecordLine,
    "decisions": DecisionLine,
    "gates": GateLine,
    "exposures": ExposureLine,
    "outcomes": OutcomeLine,
    "attestations": AttestationLine,
    "probes": ProbeLine,
    "tasks": TaskLine,
    "exclusions": ExclusionLine,
}


UNIQUE: dict[str, tuple[str, ...]] = {
    "units": ("id",),
    "records": ("id",),
    "decisions": ("id",),
    "gates": ("item", "gate"),
    "outcomes": ("id",),
    "attestations": ("item", "record"),
    "probes": ("item", "view"),
    "tasks": ("task",),
    "exclusions": ("item", "rule"),
}
"""The fields that identify a line of each file: no two lines share them."""

Lines = list[tuple[int, dict[str, Any]]]


def _repeated(lines: Lines, fields: tuple[str, ...], rel: str) -> list[Problem]:
    first: dict[tuple[Any, ...], int] = {}
    problems = []
    for number, obj in lines:
        key = tuple(obj.get(f) for f in fields)
        if not fields or None in key:
            continue
        if key in first:
            named = ", ".join(f"{f} {v}" for f, v in zip(fields, key, strict=True))
            problems.append(Problem(f"{named} already on line {first[key]}", fields[0], number, rel))
        else:
            first[key] = number
    return problems


def parse_file(folder: Path, rel: str) -> tuple[Lines, list[Problem]]:
    """Every JSON object of REL with its line number, and the problems of the lines that are none: not UTF-8,
    not JSON (NaN and Infinity included), nested too deeply, not an object, an over-long line."""
    path = folder / rel
    if not path.exists() and not path.is_symlink():
        raise NotFoundError(f"{rel} does not exist in {folder}: this release carries no admission record, or lost it")
    out: Lines = []
    problems: list[Problem] = []
    try:
        for number, raw in read_lines(path):
            obj = raw if isinstance(raw, Problem) else parse_line(raw, rel, number, orjson.loads, max_text=None)
            if isinstance(obj, Problem):
                problems.append(Problem(obj.message, obj.field, obj.line, rel))
            elif obj is not None:
                out.append((number, obj))
    except ValidationFailed as exc:  # not a regular file
        raise ValidationFailed([Problem(p.message, p.field, p.line, rel) for p in exc.problems], DAMAGED) from exc
    return out, problems


def read_records(folder: Path, key: str, rel: str) -> Lines:
    """The lines of one admission file, each valid for its model (``MODELS[key]``); every problem of the file
    is raised together (:class:`ValidationFailed`, ``FILE:LINE: field: problem``)."""
    lines, problems = parse_file(folder, rel)
    model = MODELS[key]
    for number, obj in lines:
        try:
            model.model_validate(obj)
        except ValidationError as exc:
            problems += pydantic_problems(exc, rel, number)
    if not problems:
        problems += _repeated(lines, UNIQUE.get(key, ()), rel)
    if not problems and key == "records":
        problems += payload_problems(lines, rel, shape_only=True)
    if problems:
        raise ValidationFailed(problems, DAMAGED)
    return lines


SHAPE_ERRORS = ("value_error", "assertion_error")
"""Pydantic error types of a record model's own rules (a drop needs a reason): a payload that breaks one is
still a record, whose outcome the re-derivation compares; every other error (a missing or unknown field, a
wrong type, a value off its list) is a damaged line."""


def payload_problems(lines: Lines, rel: str, shape_only: bool = False) -> list[Problem]:
    """Where a review record's payload, with its subject, stage and reviewer, is no valid record of its stage
    (a maintainer's consensus record, stage ``adjudication``, names the stage it settles and its checklist).

    With ``shape_only``, a record model's own rules are left to the re-derivation: a payload changed into
    another record, valid or not by those rules, is a difference it reports, not a damaged line. Without, it
    is asked when the re-derivation cannot use the records."""
    from curation.kinds import ADJUDICATION, stage_named

    problems: list[Problem] = []
    for number, r in lines:
        payload, stage_name = r.get("payload"), r.get("stage")
        subject = r.get("subject")
        if not isinstance(payload, dict) or not isinstance(stage_name, str) or not isinstance(subject, str):
            continue  # reported by the line's model
        if stage_name == ADJUDICATION:
            model: type[BaseModel] = _Consensus
            obj = payload
        else:
            stage = stage_named(stage_name)
            if stage is None:
                problems.append(Problem(f"unknown stage {stage_name!r}", "stage", number, rel))
                continue
            model = stage.record_model
            scope, _, target = subject.partition(":")
            obj = {scope: target, "stage": stage_name, "reviewer": r.get("reviewer"), **payload}
        try:
            model.model_validate(obj)
        except ValidationError as exc:
            errors = [e for e in exc.errors() if not (shape_only and e["type"] in SHAPE_ERRORS)]
            for err in errors:
                loc = [str(p) for p in err["loc"]]
                top = loc[0] if loc else ""
                field = "subject" if top in ("item", "group") else top if top in ("stage", "reviewer") else ""
                field = field or ".".join(["payload", *loc])
                message = err["msg"].removeprefix("Value error, ")
                plain = {"missing": "required field is missing", "extra_forbidden": "unknown field"}
                problems.append(Problem(plain.get(err["type"], message), field, number, rel))
    return problems


class _Consensus(_Line):
    stage: str = Id
    consistent: dict[str, list[str]]
    reason: str
    from_: str | None = Field(None, alias="from")


def read_settings(folder: Path, rel: str) -> dict[str, Any]:
    """``admission/settings.json`` as a checked object; NotFoundError's message when the release has none."""
    path = folder / rel
    if not path.exists() and not path.is_symlink():
        raise NotFoundError(f"{folder} has no {rel}: this release carries no admission record")
    try:
        with open_regular(path) as fh:
            data = fh.read(1 << 24)
    except ValidationFailed as exc:
        raise ValidationFailed([Problem(p.message, p.field, p.line, rel) for p in exc.problems], DAMAGED) from exc
    try:
        settings = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ValidationFailed([Problem(f"not JSON: {exc.msg}", file=rel, line=exc.lineno)], DAMAGED) from exc
    if not isinstance(settings, dict):
        raise ValidationFailed([Problem("must be a JSON object", file=rel)], DAMAGED)
    from curation.config import AgreementSettings, ReviewSettings

    problems: list[Problem] = []
    checks: list[tuple[str, type[BaseModel], Any]] = [("", SettingsFile, settings)]
    rules: tuple[tuple[str, type[BaseModel]], ...] = (("review", ReviewSettings), ("agreement", AgreementSettings))
    checks += [(name, rule, settings[name]) for name, rule in rules if isinstance(settings.get(name), dict)]
    for prefix, model, value in checks:
        try:
            model.model_validate(value, strict=True)
        except ValidationError as exc:
            for p in pydantic_problems(exc, rel, 0):
                field = ".".join(x for x in (prefix, p.field) if x)
                problems.append(Problem(p.message, field, file=rel))
    if problems:
        raise ValidationFailed(problems, DAMAGED)
    return settings
