"""Checklist drafting (Judge Anything §2.2, Fig. 14): the prompts and the parsing of the model's structured
output. Audio and video inputs are captioned first and the captions given as context, as the paper does (the
captions are the caption route's, :mod:`.captioning`: stored once per medium and model, shared with judging);
the model calls themselves go through the checker's backends (a shell), which call back into here.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from curation.errors import Problem, ValidationFailed
from curation.jsonl import MAX_TEXT_CHARS
from curation.schema import Identifier, NonEmpty

from .rubrics import DEFINITIONS, RUBRICS
from .schema import MAX_QUESTION_CHARS, ChecklistDraft

CAPTION_PROMPTS: dict[str, str] = {
    "audio": "Please describe the audio track, focusing on what is happening and what you can hear. Describe what "
    "is occurring in that context. Your description should be clear, detailed, and convey the overall atmosphere "
    "and events in the audio.",
    "video": "Please describe the content of the video, Provide a clear and concise caption summarizing the key "
    "objects or scenes shown.",
    "image": "Please describe the content of the image in detail. Provide a clear and concise caption summarizing "
    "the key objects or scenes shown.",
}
CAPTIONED = ("audio", "video")
"""Inputs the drafting model reads as captions (its instruction following is weak on them)."""

SYSTEM = (
    "You write evaluation checklists for one task of a multimodal benchmark. For each rubric, write six to eight "
    "yes/no questions that a judge can answer about a response to THIS task, specific to its input and its "
    "wanted output. Answer with JSON only, in the form given by the schema."
)

DRAFT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "checklist": {
            "type": "object",
            "properties": {
                r: {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_QUESTION_CHARS},
                    "minItems": 1,
                }
                for r in RUBRICS
            },
            "required": list(RUBRICS),
            "additionalProperties": False,
        }
    },
    "required": ["checklist"],
    "additionalProperties": False,
}
"""The structured output a backend is asked for (JSON schema)."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


TEMPLATE_SHA256 = _sha(json.dumps([SYSTEM, CAPTION_PROMPTS, DEFINITIONS, DRAFT_SCHEMA], sort_keys=True))
"""Names this version of the prompts: part of the drafting cache's key."""


@dataclass(frozen=True)
class DraftPrompt:
    system: str
    user: str
    media: dict[str, str]
    """Inputs the model sees directly (modality → path); captioned ones are in the text instead."""

    @property
    def sha256(self) -> str:
        return _sha(json.dumps([self.system, self.user, sorted(self.media)], sort_keys=True))


def draft_prompt(instruction: str, output: str, media: dict[str, str], captions: dict[str, str]) -> DraftPrompt:
    """The checklist prompt of one task; audio and video appear as their captions."""
    missing = [m for m in media if m in CAPTIONED and m not in captions]
    if missing:
        raise ValidationFailed([Problem(f"caption the {', '.join(missing)} input first", "captions")])
    lines = [f"Task instruction: {instruction}", f"Wanted output modality: {output}"]
    for modality in CAPTIONED:
        if modality in captions:
            lines.append(f"Caption of the input {modality}: {captions[modality]}")
    lines.append("Rubrics:")
    lines += [f"- {r}: {DEFINITIONS[r]}" for r in RUBRICS]
    lines.append('Return {"checklist": {rubric: [questions]}} with every rubric.')
    direct = {m: p for m, p in media.items() if m not in CAPTIONED}
    return DraftPrompt(SYSTEM, "\n".join(lines), direct)


def _named(keys: list[str]) -> str:
    """Keys a user wrote, as JSON strings: a line break in one stays on its line."""
    return ", ".join(json.dumps(k, ensure_ascii=False) for k in keys)


_NOT_BLANK = get_args(NonEmpty)[1]
ModelName = Annotated[str, StringConstraints(max_length=120), _NOT_BLANK]
Caption = Annotated[str, StringConstraints(max_length=MAX_TEXT_CHARS), _NOT_BLANK]
Question = Annotated[str, StringConstraints(max_length=MAX_QUESTION_CHARS), _NOT_BLANK]


class DraftReplayLine(BaseModel):
    """One line of a checklist-draft replay file (``curate judge draft --backend replay:FILE``): a model's recorded
    draft of one task, with the captions of its audio and video inputs. Every rubric holds at least one question
    (curation selects 1 to 6 per rubric; a draft may hold more than six, and ``[judge] draft_shown`` caps how many
    the curation page shows); one line per task, and a file with any problem drafts nothing."""

    model_config = ConfigDict(extra="forbid", strict=True)

    task: Identifier
    model: ModelName | None = None
    """The model that drafted it (provenance); a file of one model's drafts names it on every line."""
    captions: dict[str, Caption] = Field(default_factory=dict)
    """The captions of the task's ``audio`` and ``video`` inputs, which the model read instead of the media. They
    are stored as the caption route's (one per medium and model): lines of tasks sharing a medium give it the same
    caption, and a line may leave out a medium this file captioned in an earlier draft (stored)."""
    checklist: dict[str, list[Question]]

    @field_validator("captions", mode="before")
    @classmethod
    def _captioned(cls, value: Any) -> Any:
        """Keys first, so that a problem never names a field by a key that holds a line break."""
        unknown = [k for k in value if k not in CAPTIONED] if isinstance(value, dict) else []
        if unknown:
            raise ValueError(f"no caption is read for {_named(unknown)}; captions are for {', '.join(CAPTIONED)}")
        return value

    @field_validator("checklist", mode="before")
    @classmethod
    def _known_rubrics(cls, value: Any) -> Any:
        unknown = [k for k in value if k not in RUBRICS] if isinstance(value, dict) else []
        if unknown:
            raise ValueError(f"unknown rubric {_named(unknown)}; rubrics are {', '.join(RUBRICS)}")
        return value

    @field_validator("checklist")
    @classmethod
    def _every_rubric(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        empty = [r for r in RUBRICS if not value.get(r)]
        if empty:
            raise ValueError(f"no question for {', '.join(empty)}: every rubric needs at least one question")
        return value


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_draft(text: str, where: str = "draft") -> ChecklistDraft:
    """The model's answer as a draft: JSON (optionally fenced), ``{"checklist": {...}}`` or the bare mapping."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValidationFailed([Problem(f"not JSON: {exc.msg}", where)], "the model's draft could not be read") from exc
    if isinstance(data, dict) and "checklist" not in data:
        data = {"checklist": data}
    try:
        return ChecklistDraft.model_validate(data)
    except ValidationError as exc:
        problems = [Problem(e["msg"].removeprefix("Value error, "), where) for e in exc.errors()]
        raise ValidationFailed(problems, "the model's draft does not follow the schema") from exc
