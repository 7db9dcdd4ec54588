"""What the screening pipeline asks of a model, and the prompts it asks with (App. D).

The domain only states requests and the JSON schema each answer must satisfy; the checker's backends
(``replay:``, ``openai:``, ``transformers:``, ``vllm:``) answer them, behind :class:`StructuredModel`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from pydantic import BaseModel

from .schema import BookMetadata, NextPageConditions, Scores, SpeechTarget, prompt_hash

TASKS = ("book_meta", "conditions", "speech", "score")
TASK_MODELS: dict[str, type[BaseModel]] = {
    "book_meta": BookMetadata,
    "conditions": NextPageConditions,
    "speech": SpeechTarget,
    "score": Scores,
}


@cache
def task_schema(task: str) -> dict[str, Any]:
    """The JSON schema a task's answer is held to (computed once: pydantic takes milliseconds per call)."""
    return TASK_MODELS[task].model_json_schema()


BOOK_META_SYSTEM = (
    "You are an expert metadata curator for children's and general storybooks. Read the entire book text and "
    "produce a single, book-level metadata JSON. Output only a valid JSON object. If a field is unknown or not "
    "explicitly inferable from the text, set it to an empty string (or [] for arrays). Include all characters "
    "mentioned, main characters first. Be conservative: do not fabricate details. Use blanks for unknowns."
)
CONDITIONS_SYSTEM = (
    "You are a storyboard + illustration planner. Given (Metadata, Previous Page, Gold Next Page), infer and "
    "WRITE ONLY the JSON 'Next Page Conditions' that would produce the Gold Next Page. Use concise, "
    "production-ready values. Ensure continuity with metadata."
)
SPEECH_SYSTEM = (
    "You are an AI assistant that reads short children's stories and generates structured JSON metadata for "
    "TTS. If the story has a line of dialogue, give it with its speaker; otherwise write one line a character "
    "might say. Assign emotion (angry, happy, neutral, sad), speed (normal, fast, slow), pitch (normal, high, "
    "low) and gender (female, male). Respond with valid JSON only."
)
SCORE_SYSTEM = (
    "You screen candidate page transitions of illustrated storybooks for a benchmark of next-page generation. "
    "Score 1-10, each with a one-sentence rationale: current_page_quality (the current page's image and "
    "narration are clear and well made), next_page_quality (the same for the next page), image_style_coherence "
    "(both illustrations share one style), transition_coherence (the next page follows from the current one). "
    "Respond with the JSON object only."
)


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


def book_meta_request(book: str, title: str, pages: Sequence[str]) -> StructuredRequest:
    text = "\n\n".join(pages)
    user = f"Generate metadata for the following single book.\nBOOK_NAME: {title or book}\nBOOK_TEXT:\n<<<BOOK_START\n{text}\nBOOK_END>>>"
    return StructuredRequest(f"book:{book}", "book_meta", BOOK_META_SYSTEM, user, ())


def conditions_request(
    subject: str, metadata: dict[str, Any], current: tuple[str, str], nxt: tuple[str, str]
) -> StructuredRequest:
    user = (
        f"Metadata:\n{json.dumps(metadata, ensure_ascii=False, sort_keys=True)}\n"
        f"Previous Page:\n(image)\nText:\n{current[1]}\nGold Next Page:\n(image)\nText:\n{nxt[1]}\n"
        "# Write ONLY the JSON object. No backticks, no commentary."
    )
    return StructuredRequest(subject, "conditions", CONDITIONS_SYSTEM, user, (current[0], nxt[0]))


def speech_request(subject: str, story: str, lines: Sequence[str]) -> StructuredRequest:
    user = f"# Story -\n{story}\n# Lines -\n" + "\n".join(lines) + "\n# Metadata -"
    return StructuredRequest(subject, "speech", SPEECH_SYSTEM, user, ())


def score_request(subject: str, current: tuple[str, str], nxt: tuple[str, str]) -> StructuredRequest:
    user = f"Current page:\n(image)\n{current[1]}\n\nNext page:\n(image)\n{nxt[1]}"
    return StructuredRequest(subject, "score", SCORE_SYSTEM, user, (current[0], nxt[0]))
