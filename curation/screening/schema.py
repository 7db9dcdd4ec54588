"""The story transition: two pages, book metadata, next-page conditions and a speech target.

Every model-written field group keeps its provenance (model and prompt hash) beside the human revision,
so a release can say which words a person wrote and which a model proposed (Omni-StoryBench App. C,
"annotation provenance").
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

EMOTIONS = ("angry", "happy", "neutral", "sad")
SPEEDS = ("normal", "fast", "slow")
PITCHES = ("normal", "high", "low")
GENDERS = ("female", "male")
CRITERIA = ("current_page_quality", "next_page_quality", "image_style_coherence", "transition_coherence")
"""The four screening criteria of §4.1, each scored 1–10 with a rationale."""
ANNOTATION_GROUPS = ("book_meta", "conditions", "speech")


PAGE_MAX = 2**31 - 1
"""The largest page number both databases store (a bigger one is refused by name, never an OverflowError)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Page(_Strict):
    image: str = Field(min_length=1, description="path relative to the JSONL file, or a content hash once stored")
    text: str = Field(description="the page's narration as published")


class CandidatePage(Page):
    """A page of an imported candidate: its narration may be empty (a page without words), never only
    whitespace."""

    @field_validator("text")
    @classmethod
    def _not_only_whitespace(cls, value: str) -> str:
        if value and value.isspace():
            raise ValueError('holds only whitespace; give the page\'s narration, or "" for a page without words')
        return value


class Source(_Strict):
    collection: str = Field(min_length=1, max_length=100, description="e.g. african_storybook, storyweaver")
    license: str = Field(min_length=1, max_length=100, description="SPDX identifier of the book's licence")
    url: str = ""


class Character(_Strict):
    name: str
    sex: Literal["male", "female", "non-binary", ""] = ""
    age_range: str = ""
    species: str = ""
    role: str = ""
    personality: list[str] = []
    appearance: str = ""


class BookMetadata(_Strict):
    """Book-level metadata (App. D's first prompt)."""

    genre: str = ""
    topic: str = ""
    style: str = ""
    narrative_tense: Literal["Past", "Present", "Future", ""] = ""
    narrative_perspective: Literal[
        "First-person", "Third-person limited", "Third-person omniscient", "Second-person", ""
    ] = ""
    characters: list[Character] = []


class CharacterCondition(_Strict):
    name: str
    emotion: str = ""
    visibility: Literal["visible", "offscreen", "partially_visible", ""] = ""
    action: str = ""
    speech_intent: str = ""


class NextPageConditions(_Strict):
    """Local generation constraints for the next page (§4.1)."""

    characters: list[CharacterCondition] = []
    scene: str = ""
    text_goal: str = Field("", description="the narration instruction")
    ambient_sound: str = ""


class SpeechTarget(_Strict):
    """The target utterance and its speaker's four scored attributes (App. D's third prompt)."""

    speaker: str = ""
    utterance: str = Field(min_length=1)
    emotion: Literal["angry", "happy", "neutral", "sad"]
    speed: Literal["normal", "fast", "slow"]
    pitch: Literal["normal", "high", "low"]
    gender: Literal["female", "male"]


class Criterion(_Strict):
    score: int = Field(ge=1, le=10)
    rationale: str = Field(min_length=1)


class Scores(_Strict):
    """A model's four screening scores (JSON-schema constrained, each 1–10 with a rationale)."""

    current_page_quality: Criterion
    next_page_quality: Criterion
    image_style_coherence: Criterion
    transition_coherence: Criterion

    @property
    def mean(self) -> float:
        return sum(getattr(self, name).score for name in CRITERIA) / len(CRITERIA)


class ModelProvenance(_Strict):
    """Who wrote a field group: the model and the hash of the exact prompt it was given."""

    model: str = Field(min_length=1)
    prompt_hash: str = Field(min_length=8, max_length=64)


ANNOTATION_MODELS: dict[str, type[BaseModel]] = {
    "book_meta": BookMetadata,
    "conditions": NextPageConditions,
    "speech": SpeechTarget,
}


class Proposal(_Strict):
    """A model's proposal for one field group, kept unchanged; human revisions are stored beside it."""

    value: dict
    provenance: ModelProvenance

    def parsed(self, group: str) -> BaseModel:
        return ANNOTATION_MODELS[group].model_validate(self.value)


class PageOrigin(_Strict):
    """Where a page came from in its published book."""

    file: str = Field("", max_length=500, description="the book's file or folder name")
    href: str = Field("", max_length=500, description="the page's document in the package (or its image)")
    index: int = Field(0, ge=0, description="the page's position in reading order, from 0")


class Origin(_Strict):
    """A transition's provenance as ``curate import books`` read it: the book's attribution and language
    from its package metadata, and each page's place in the book."""

    identifier: str = Field("", max_length=500)
    language: str = Field("", max_length=50)
    attribution: str = Field("", max_length=2000, description="authors, illustrators, publisher and rights line")
    current: PageOrigin
    next: PageOrigin


class CandidateLine(_Strict):
    """One line of ``curate import candidates``: a page-to-page transition with its media paths."""

    id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
    book: str = Field(min_length=1, max_length=200)
    page: StrictInt = Field(ge=0, le=PAGE_MAX, description="the current page's number in its book")
    title: str = ""
    source: Source
    current: CandidatePage
    next: CandidatePage
    speech_lines: list[str] | None = None
    """Dialogue lines of the next page when the source marks them; otherwise counted from quotes."""
    annotations: dict[Literal["book_meta", "conditions", "speech"], Proposal] = {}
    """Model annotations made elsewhere, with their provenance (optional: `curate screen` can make them)."""
    origin: Origin | None = None
    """Provenance per page (``curate import books`` writes it)."""

    @field_validator("annotations")
    @classmethod
    def _annotations_valid(cls, value: dict[str, Proposal]) -> dict[str, Proposal]:
        for group, proposal in value.items():
            proposal.parsed(group)  # raises a located error for a malformed proposal
        return value


def prompt_hash(system: str, user: str, task: str) -> str:
    """A stable identity for a prompt: its system and user text and the task (whose output schema it was
    held to; the schema itself is fixed by this program's version)."""
    digest = hashlib.sha256()
    for part in (task, system, user):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


class StoryTransition(_Strict):
    """A benchmark item of the ``story_transition`` kind: the pages, the current annotation values, and
    beside them the model's untouched proposals (with provenance) and who revised which field."""

    id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
    kind: Literal["story_transition"] = "story_transition"
    book: str = Field(min_length=1, max_length=200)
    page: int = Field(ge=0)
    title: str = ""
    source: Source
    current: Page
    next: Page
    """The reference: what a system should generate after the current page."""
    book_meta: BookMetadata
    conditions: NextPageConditions
    speech: SpeechTarget
    proposals: dict[Literal["book_meta", "conditions", "speech"], Proposal]
    """The model's proposal per field group; a group without one has every field named in ``revised_by``."""
    revised_by: dict[str, str] = {}
    """Dotted field path (``conditions.scene``) -> the reviewer whose revision set its current value."""
    scores: Scores | None = None
    score_provenance: ModelProvenance | None = None
    origin: Origin | None = None
    """The book's attribution and each page's place in it, when the candidate carried them."""

    @field_validator("proposals")
    @classmethod
    def _proposals_valid(cls, value: dict[str, Proposal]) -> dict[str, Proposal]:
        problems = []
        for group, proposal in value.items():  # a valid value of its group, so that a diff against it never fails
            try:
                proposal.parsed(group)
            except ValidationError as exc:
                for err in exc.errors():
                    where = ".".join([group, "value", *(str(p) for p in err["loc"])])
                    plain = {"missing": "required field is missing", "extra_forbidden": "unknown field"}
                    problems.append(f"{where}: {plain.get(err['type'], err['msg'])}")
        if problems:
            raise ValueError("; ".join(problems))
        return value
