"""What the screening pipeline asks of a model, and the prompts it asks with (App. D, from the prompt files of
:mod:`curation.screening.prompt_templates`).

The domain only states requests and the JSON schema each answer must satisfy; the checker's backends
(``replay:``, ``openai:``, ``transformers:``, ``vllm:``) answer them, behind :class:`StructuredModel`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from pydantic import BaseModel, model_validator

from .prompt_templates import PACKAGED, ScreenPrompts
from .schema import BookMetadata, NextPageConditions, Scores, SpeechTarget, prompt_hash

TASKS = ("book_meta", "conditions", "speech", "score")


class BookMetaAnswer(BookMetadata):
    """A book-metadata answer: App. D asks for ``{"metadata": {...}}``; the task's schema (what constrained
    decoding follows) is the metadata itself. Both forms are accepted; the value kept is the metadata."""

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"metadata"} and isinstance(value["metadata"], dict):
            return value["metadata"]
        return value


TASK_MODELS: dict[str, type[BaseModel]] = {
    "book_meta": BookMetaAnswer,
    "conditions": NextPageConditions,
    "speech": SpeechTarget,
    "score": Scores,
}


@cache
def task_schema(task: str) -> dict[str, Any]:
    """The JSON schema a task's answer is held to (computed once: pydantic takes milliseconds per call)."""
    return TASK_MODELS[task].model_json_schema()


@cache
def _schema_text(task: str) -> str:
    return json.dumps(task_schema(task), ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class StructuredRequest:
    """One model call: a subject (a candidate id, or ``book:<id>``), its task, prompt and output schema."""

    subject: str
    task: str
    system: str
    user: str
    images: tuple[str, ...] = ()

    @property
    def schema(self) -> dict[str, Any]:
        return task_schema(self.task)

    @property
    def prompt_hash(self) -> str:
        return prompt_hash(self.system, self.user, self.task)


class StructuredModel(Protocol):
    """A backend that answers structured requests with JSON objects (``None`` when it could not)."""

    @property
    def model_id(self) -> str: ...

    batch_size: int

    def generate(self, requests: Sequence[StructuredRequest]) -> list[dict[str, Any] | None]: ...


def book_meta_request(
    book: str, title: str, pages: Sequence[str], prompts: ScreenPrompts = PACKAGED
) -> StructuredRequest:
    user = prompts.render("book_meta.user.txt", book_name=title or book, book_text="\n\n".join(pages))
    return StructuredRequest(f"book:{book}", "book_meta", prompts.texts["book_meta.system.txt"], user, ())


def _image(path: str) -> str:
    return "(image)" if path else "(no image)"


def conditions_request(
    subject: str,
    metadata: dict[str, Any],
    current: tuple[str, str],
    nxt: tuple[str, str],
    prompts: ScreenPrompts = PACKAGED,
    next_lines: Sequence[str] = (),
) -> StructuredRequest:
    """App. D's second prompt; the pages' images go with the request, in this order. The previous page has no
    speech of its own in a candidate; the next page's is its dialogue lines, when the source marks them."""
    user = prompts.render(
        "conditions.user.txt",
        metadata_json=json.dumps(metadata, ensure_ascii=False, sort_keys=True),
        previous_image=_image(current[0]),
        previous_text=current[1],
        previous_speech_json="[]",
        next_image=_image(nxt[0]),
        next_text=nxt[1],
        next_speech_json=json.dumps(list(next_lines), ensure_ascii=False),
        schema_json=_schema_text("conditions"),
    )
    system = prompts.texts["conditions.system.txt"]
    return StructuredRequest(subject, "conditions", system, user, (current[0], nxt[0]))


def speech_request(
    subject: str, story: str, lines: Sequence[str], prompts: ScreenPrompts = PACKAGED
) -> StructuredRequest:
    """App. D's third prompt, in its two cases: metadata for the dialogue lines given, or a line to write."""
    if lines:
        user = prompts.render("speech.user.txt", story_text=story, lines_text="\n".join(lines))
    else:
        user = prompts.render("speech_no_lines.user.txt", story_text=story)
    return StructuredRequest(subject, "speech", prompts.texts["speech.system.txt"], user, ())


def score_request(
    subject: str, current: tuple[str, str], nxt: tuple[str, str], prompts: ScreenPrompts = PACKAGED
) -> StructuredRequest:
    user = prompts.render(
        "score.user.txt",
        current_image=_image(current[0]),
        current_text=current[1],
        next_image=_image(nxt[0]),
        next_text=nxt[1],
    )
    return StructuredRequest(subject, "score", prompts.texts["score.system.txt"], user, (current[0], nxt[0]))
