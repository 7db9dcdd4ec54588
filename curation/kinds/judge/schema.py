"""Pydantic models of the ``judge_task`` kind's interchange records (JSON Lines, media paths relative to the file).

A task line::

    {"id": "v2t-007", "instruction": "What happens before the bell rings?", "inputs": {"video": "media/bell.mp4"},
     "output": "text", "source": "CVRR", "license": "CC-BY-4.0"}

A response line::

    {"task": "v2t-007", "system": "gpt-4o", "output": {"text": "A crowd gathers ..."}}

Every checklist entry keeps its provenance: the model and the hash of the prompt that drafted it, or the
person who edited or added it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    field_validator,
    model_validator,
)

from curation.schema import Identifier, NonEmpty

from .rubrics import CRITERIA, RUBRICS, SCORE_MAX, SCORE_MIN

JUDGE_MODALITIES: tuple[str, ...] = ("text", "image", "audio", "video")
"""Judge Anything's media, in the order modality pairs are written (``image+audio->video``)."""
MEDIA_MODALITIES: tuple[str, ...] = ("image", "audio", "video")

Modality = Literal["text", "image", "audio", "video"]
Score = Annotated[StrictInt, Field(ge=SCORE_MIN, le=SCORE_MAX)]
"""A whole number on the scale: ``true``, ``"4"`` and ``3.0`` are refused, never coerced."""
Choice = Literal["first", "second", "tie"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def modality_pair(inputs: list[str] | tuple[str, ...], output: str) -> str:
    """``text->image``, ``image+audio->text``: the task's input modalities in canonical order, then its output."""
    ordered = [m for m in JUDGE_MODALITIES if m in inputs] or ["text"]
    return f"{'+'.join(ordered)}->{output}"


class TaskInputs(_Strict):
    """The media a task's instruction refers to, one file per modality (paths relative to the JSONL file)."""

    image: NonEmpty | None = None
    audio: NonEmpty | None = None
    video: NonEmpty | None = None

    def media(self) -> dict[str, str]:
        return {m: p for m in MEDIA_MODALITIES if (p := getattr(self, m)) is not None}


class TaskLine(_Strict):
    """One any-to-any task: an instruction with optional media inputs and the modality of the wanted output."""

    id: Identifier
    instruction: NonEmpty
    inputs: TaskInputs = Field(default_factory=TaskInputs)
    output: Modality
    source: NonEmpty
    """The benchmark the query comes from (e.g. ``VBench``)."""
    license: NonEmpty
    kind: Literal["judge_task"] = "judge_task"

    @property
    def input_modalities(self) -> tuple[str, ...]:
        return ("text", *self.inputs.media())

    @property
    def modality_pair(self) -> str:
        return modality_pair(self.input_modalities, self.output)


class ResponseOutput(_Strict):
    """A system's output: text, or one media file, in the task's output modality."""

    text: str | None = None
    image: NonEmpty | None = None
    audio: NonEmpty | None = None
    video: NonEmpty | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ResponseOutput:
        given = [m for m in JUDGE_MODALITIES if getattr(self, m) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of text, image, audio, video (got {', '.join(given) or 'none'})")
        return self

    @property
    def modality(self) -> str:
        return next(m for m in JUDGE_MODALITIES if getattr(self, m) is not None)


class ResponseLine(_Strict):
    """One system's response to a task; its id defaults to ``<task>:<system>``."""

    task: Identifier
    system: Identifier
    output: ResponseOutput
    id: Identifier | None = None

    @property
    def response_id(self) -> str:
        return self.id or f"{self.task}:{self.system}"


# ---- checklists ---------------------------------------------------------------------------------------


class ModelProvenance(_Strict):
    by: Literal["model"] = "model"
    model: NonEmpty
    prompt_sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class PersonProvenance(_Strict):
    by: Literal["person"] = "person"
    person: Identifier
    action: Literal["edited", "added"]
    edited_from: str | None = None
    """The id of the entry this one rewrites (``edited`` only)."""


EntryProvenance = Annotated[ModelProvenance | PersonProvenance, Field(discriminator="by")]


def entry_id(task: str, rubric: str, text: str) -> str:
    """A stable id from what the entry says: the same question drafted twice is one entry."""
    digest = hashlib.sha256(f"{task}\n{rubric}\n{' '.join(text.split())}".encode()).hexdigest()
    return f"{rubric[:4]}-{digest[:10]}"


class ChecklistEntry(_Strict):
    """One yes/no question that helps judge a response on one rubric."""

    id: str
    rubric: Literal["relevance", "trustworthiness", "creativity", "clarity", "coherence", "completeness"]
    text: NonEmpty
    provenance: EntryProvenance


MAX_QUESTION_CHARS = 200
"""The longest drafted question the schema asks for (it bounds a runaway model's answer)."""


class ChecklistDraft(_Strict):
    """A model's structured output for one task: questions per rubric (Judge Anything §2.2), as many per rubric
    as the model gives: the curator selects 1 to 6 of them, and ``[judge] draft_shown`` caps what is shown."""

    checklist: dict[str, list[NonEmpty]]

    @field_validator("checklist")
    @classmethod
    def _known_rubrics(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = sorted(set(value) - set(RUBRICS))
        if unknown:
            raise ValueError(f"unknown rubric(s) {', '.join(unknown)}; rubrics are {', '.join(RUBRICS)}")
        if not any(value.values()):
            raise ValueError("the draft holds no question")
        long = sorted({r for r, questions in value.items() for q in questions if len(q) > MAX_QUESTION_CHARS})
        if long:
            raise ValueError(f"a question for {', '.join(long)} is longer than {MAX_QUESTION_CHARS} characters")
        return value


class EntryEdit(_Strict):
    entry: str
    text: NonEmpty


class AddedEntry(_Strict):
    rubric: Literal["relevance", "trustworthiness", "creativity", "clarity", "coherence", "completeness"]
    text: NonEmpty


class ChecklistSelectionRecord(_Strict):
    """A person's selection from a task's candidate entries (stages ``checklist_curation`` and
    ``checklist_crosscheck``); the curator may also rewrite selected entries and add at most one."""

    task: Identifier
    stage: Literal["checklist_curation", "checklist_crosscheck"]
    reviewer: Identifier
    selected: list[str]
    edits: list[EntryEdit] = Field(default_factory=list)
    added: list[AddedEntry] = Field(default_factory=list, max_length=1)

    @model_validator(mode="after")
    def _edits_only_by_curator(self) -> ChecklistSelectionRecord:
        if self.stage == "checklist_crosscheck" and (self.edits or self.added):
            raise ValueError("a cross-check selects among the candidate entries; it neither edits nor adds")
        if len(set(self.selected)) != len(self.selected):
            raise ValueError("an entry is selected twice")
        return self


# ---- responses, samples, annotations, judges ---------------------------------------------------------


class ResponseReviewRecord(_Strict):
    """Stage ``response_review``: is the response usable as a judging sample?"""

    response: Identifier
    stage: Literal["response_review"] = "response_review"
    reviewer: Identifier
    usable: StrictBool
    reason: str = ""
    nsfw: StrictBool = False

    @model_validator(mode="after")
    def _reason_when_unusable(self) -> ResponseReviewRecord:
        if not self.usable and not self.reason.strip():
            raise ValueError("an unusable response needs a reason")
        if self.usable and self.nsfw:
            raise ValueError("an NSFW response cannot be usable")
        return self


class ScoreSample(_Strict):
    """(task, response): scored 1–5 overall and per rubric (D_score)."""

    id: str
    task: str
    response: str
    system: str
    modality_pair: str


class PairSample(_Strict):
    """(task, first response, second response) from two different systems (D_pair); ``swapped`` records
    whether the seeded coin put the sampled pair's later response first."""

    id: str
    task: str
    first: str
    second: str
    first_system: str
    second_system: str
    modality_pair: str
    swapped: bool


def _check_criteria(values: Mapping[str, object]) -> None:
    unknown = sorted(set(values) - set(CRITERIA))
    if unknown:
        raise ValueError(f"unknown criterion {', '.join(unknown)}; criteria are {', '.join(CRITERIA)}")


class ScoreAnnotation(_Strict):
    """A person's 1–5 scores of a score sample: overall and per rubric."""

    sample: str
    annotator: Identifier
    scores: dict[str, Score]

    @field_validator("scores")
    @classmethod
    def _criteria(cls, value: dict[str, int]) -> dict[str, int]:
        _check_criteria(value)
        return value


class PairAnnotation(_Strict):
    """A person's choices on a pair sample: first, second or tie, overall and per rubric."""

    sample: str
    annotator: Identifier
    choices: dict[str, Choice]

    @field_validator("choices")
    @classmethod
    def _criteria(cls, value: dict[str, str]) -> dict[str, str]:
        _check_criteria(value)
        return value


class JudgeOutputLine(_Strict):
    """A judge model's answers for one sample: several samples per criterion, aggregated as configured
    (scores averaged; choices by majority, Judge Anything §3.1)."""

    sample: str
    judge: Identifier
    scores: dict[str, list[Score]] | None = None
    choices: dict[str, list[Choice]] | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> JudgeOutputLine:
        if (self.scores is None) == (self.choices is None):
            raise ValueError('give either "scores" (score samples) or "choices" (pair samples)')
        given = self.scores if self.scores is not None else self.choices
        assert given is not None
        _check_criteria(given)
        empty = sorted(c for c, v in given.items() if not v)
        if empty:
            raise ValueError(f"no judgement given for {', '.join(empty)}")
        return self


class ChecklistAdjudicationRecord(_Strict):
    """A maintainer's decision on a task whose curator and cross-checker selected differently."""

    task: Identifier
    adjudicator: Identifier
    selected: list[str] = Field(min_length=1)
    reason: NonEmpty
