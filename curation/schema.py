"""Pydantic models at the boundary: the JSONL interchange formats of design.md."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .audio_production.credits import credit_problems
from .exclusion_rules import Attestation, RuleName
from .notes import NOTE_MAX_CHARS
from .taxonomy import TAXONOMY
from .vocab import AUDIO_SOURCES, CHECKLIST_VIEWS, IMAGE_SOURCES, MODALITIES, OPTION_KEYS, Modality, checklist_views_of


def _not_blank(value: str) -> str:
    """Text is kept as given (no edge whitespace is trimmed); only a value with nothing but whitespace is refused."""
    if not value or value.isspace():  # what ``not value.strip()`` says, without copying the text
        raise ValueError("must hold at least 1 character that is not whitespace")
    return value


def none_or_text(value: str) -> str:
    """An optional text (a note, a reason): empty for none; a value of nothing but whitespace is refused."""
    if value and value.isspace():
        raise ValueError('holds only whitespace; write it, or leave it out ("") for none')
    return value


Identifier = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:\-]+$")]
"""Ids and names: letters, digits and ``._:-`` only, so a space at either end is refused, never trimmed."""
NonEmpty = Annotated[str, AfterValidator(_not_blank)]
"""Text kept exactly as given (spaces, tabs, U+2028, NBSP... at its ends included), but not blank."""
Note = Annotated[str, AfterValidator(none_or_text)]
"""An optional text kept as given: empty (none given), or holding a character that is not whitespace."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AssetProvenance(BaseModel):
    """Where a medium came from; extra keys (attribution, url, actor, ...) are kept as they are."""

    model_config = ConfigDict(extra="allow")
    source: str
    license: NonEmpty


class ImageProvenance(AssetProvenance):
    @field_validator("source")
    @classmethod
    def _known_source(cls, v: str) -> str:
        if v not in IMAGE_SOURCES:
            raise ValueError(f"unknown image source {v!r}; expected one of {', '.join(IMAGE_SOURCES)}")
        return v


class AudioProvenance(AssetProvenance):
    """An audio clip's source and licence, and optionally who made it (``curation.audio_production.credits``):
    ``speakers`` (names of people), ``producer`` (a ``voice_acting`` or ``tts_edited`` clip's), ``session`` and
    ``equipment`` (TRIAD B.5's recording controls). Consent is recorded per speaker, not here."""

    @field_validator("source")
    @classmethod
    def _known_source(cls, v: str) -> str:
        if v not in AUDIO_SOURCES:
            raise ValueError(f"unknown audio source {v!r}; expected one of {', '.join(AUDIO_SOURCES)}")
        return v

    @model_validator(mode="after")
    def _credits(self) -> AudioProvenance:
        problems = credit_problems(self.source, self.model_extra or {})
        if problems:
            raise ValueError("; ".join(problems))
        return self


class Provenance(_Strict):
    """Per medium the item has (an item without audio has no ``audio`` key)."""

    image: ImageProvenance | None = None
    audio: AudioProvenance | None = None


class Taxonomy(_Strict):
    """One leaf per modality the item has (TRIAD App. A)."""

    text: str | None = None
    image: str | None = None
    audio: str | None = None

    @field_validator("text", "image", "audio")
    @classmethod
    def _known_leaf(cls, v: str | None, info: ValidationInfo) -> str | None:
        modality = info.field_name or ""
        if v is not None and v not in TAXONOMY[modality]:
            raise ValueError(f"unknown {modality} leaf {v!r}; expected one of {', '.join(TAXONOMY[modality])}")
        return v


NoteText = Annotated[str, StringConstraints(max_length=NOTE_MAX_CHARS), AfterValidator(_not_blank)]
"""A note on a medium: kept as typed, not blank, at most :data:`~curation.notes.NOTE_MAX_CHARS` characters."""


class ItemNotes(_Strict):
    """TRIAD App. E.3's human descriptions of the item's media (the A+ and I+ conditions), written once per item.

    Each note is optional, only for a modality the item has; a note never names an option, the item's taxonomy
    leaf or a sister item (``curate audit`` flags it as ``leak:note_option``, ``leak:note_leaf``,
    ``leak:note_sister``).
    """

    image: NoteText | None = None
    """I+: a literal caption of the scene (objects, agents, spatial relations, visible text, gestures, motion)."""
    audio: NoteText | None = None
    """A+: the transcript, prosody relevant to disambiguation, speaker or voice properties, non-speech events."""

    @model_validator(mode="after")
    def _holds_a_note(self) -> ItemNotes:
        if self.image is None and self.audio is None:
            raise ValueError("give an image or an audio note, or leave notes out")
        return self


def _all_modalities() -> list[Modality]:
    """An item's default modalities: all of :data:`~curation.vocab.MODALITIES`, in their canonical order."""
    return ["text", "image", "audio"]


class ItemContent(_Strict):
    """An item of the ``mcq`` kind as authored: the TRIAD tuple plus its tags. Media are paths (JSONL) or
    hashes (store).

    ``modalities`` (default all three) says which of text (``context``), ``image`` and ``audio`` the item has;
    a field of a modality it lacks is absent, as are its taxonomy leaf and provenance.
    """

    id: Identifier
    group: Identifier
    kind: Literal["mcq"] = "mcq"
    modalities: list[Literal["text", "image", "audio"]] = Field(default_factory=_all_modalities)
    perturbed: Literal["text", "image", "audio", "mixed"]
    language: Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]+)*$")] = "en"
    author: Identifier
    context: NonEmpty | None = None
    image: NonEmpty | None = None
    audio: NonEmpty | None = None
    question: NonEmpty
    options: dict[str, NonEmpty]
    answer: str
    taxonomy: Taxonomy
    ambiguous: list[Literal["text", "image", "audio"]] = Field(min_length=1, max_length=3)
    provenance: Provenance = Provenance()
    notes: ItemNotes | None = None
    """Optional descriptions of the item's media (TRIAD's A+ / I+ notes), only for modalities it has."""

    @field_validator("options")
    @classmethod
    def _option_keys(cls, v: dict[str, str]) -> dict[str, str]:
        if not 2 <= len(v) <= 8:
            raise ValueError(f"an item needs 2 to 8 options, this one has {len(v)}")
        expected = list(OPTION_KEYS[: len(v)])
        if sorted(v) != expected:
            raise ValueError(f"option keys must be {', '.join(expected)} (got {', '.join(sorted(v))})")
        texts = [t.casefold() for t in v.values()]
        if len(set(texts)) != len(texts):
            raise ValueError("two options have the same text")
        return {k: v[k] for k in expected}

    @field_validator("ambiguous", "modalities")
    @classmethod
    def _unique_modalities(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("a modality is listed twice")
        return [m for m in MODALITIES if m in v]

    @model_validator(mode="after")
    def _fields_match_modalities(self) -> ItemContent:
        """Each modality the item has brings its field, taxonomy leaf (and provenance); the others are absent."""
        problems = []
        if len(self.modalities) < 2:
            problems.append("modalities: an mcq item needs at least two modalities")
        fields = {"text": "context", "image": "image", "audio": "audio"}
        for modality, name in fields.items():
            has = modality in self.modalities
            if has and getattr(self, name) is None:
                problems.append(f"{name}: required field is missing")
            if not has and getattr(self, name) is not None:
                problems.append(f"{name}: the item has no {modality} (modalities: {', '.join(self.modalities)})")
            if has and getattr(self.taxonomy, modality) is None:
                problems.append(f"taxonomy.{modality}: required field is missing")
            if not has and getattr(self.taxonomy, modality) is not None:
                problems.append(f"taxonomy.{modality}: the item has no {modality}")
            if modality != "text":
                if has and getattr(self.provenance, modality) is None:
                    problems.append(f"provenance.{modality}: required field is missing")
                if not has and getattr(self.provenance, modality) is not None:
                    problems.append(f"provenance.{modality}: the item has no {modality}")
                if not has and self.notes is not None and getattr(self.notes, modality) is not None:
                    problems.append(f"notes.{modality}: the item has no {modality}")
        outside = [m for m in self.ambiguous if m not in self.modalities]
        if outside:
            problems.append(f"ambiguous: the item has no {', '.join(outside)}")
        if self.perturbed != "mixed" and self.perturbed not in self.modalities:
            problems.append(f"perturbed: the item has no {self.perturbed}")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def has_default_modalities(self) -> bool:
        return tuple(self.modalities) == MODALITIES

    @field_validator("answer")
    @classmethod
    def _answer_is_an_option(cls, v: str, info: ValidationInfo) -> str:
        options = info.data.get("options")
        if options is not None and v not in options:
            raise ValueError(f"{v!r} is not among the options {', '.join(options)}")
        return v

    @property
    def tier(self) -> int:
        """Ambiguity tier: how many modalities are internally ambiguous."""
        return len(self.ambiguous)


Verdict = Literal["pass", "fail"]


class GrammarReview(_Strict):
    item: Identifier
    stage: Literal["grammar"]
    reviewer: Identifier
    verdict: Verdict
    note: Note = ""


class ImageScreeningReview(_Strict):
    """A screening of an AI-generated image for artefacts (TRIAD §4.2); a ``fail`` names what is wrong."""

    item: Identifier
    stage: Literal["image_screening"]
    reviewer: Identifier
    verdict: Verdict
    reason: Note = ""

    @model_validator(mode="after")
    def _fail_gives_a_reason(self) -> ImageScreeningReview:
        if self.verdict == "fail" and not self.reason:
            raise ValueError("reason: say which artefact fails the image (extra fingers, garbled text, ...)")
        return self


class AudioScores(_Strict):
    """Whole numbers 1-5, as JSON numbers: ``true`` or ``"4"`` are refused, not coerced."""

    naturalness: StrictInt = Field(ge=1, le=5)
    clarity: StrictInt = Field(ge=1, le=5)
    artefacts: StrictInt = Field(ge=1, le=5)


class AudioReview(_Strict):
    item: Identifier
    stage: Literal["audio_signoff"]
    reviewer: Identifier
    scores: AudioScores
    note: Note = ""


class ChecklistReview(_Strict):
    item: Identifier
    stage: Literal["subset_checklist"]
    reviewer: Identifier
    consistent: dict[str, list[str]]
    ambiguous: list[Literal["text", "image", "audio"]] | None = None
    """The reviewer's own ambiguity tags (which modalities are internally ambiguous): the tier tag whose
    agreement with the author's TRIAD C.3 reports. Optional."""
    exclusions: dict[RuleName, Attestation] | None = None
    """The reviewer's attestation per exclusion rule of the workspace (``[review] exclusion_rules``): ``pass``
    (nothing in the item breaks the rule) or ``fail`` (something does: the item is returned). Optional in the
    record; an item is admitted only once a counted reviewer attested ``pass`` on every rule (``curation.exclusions``).
    Rules the workspace does not list are refused when the record is stored."""
    note: Note = ""

    @field_validator("ambiguous")
    @classmethod
    def _modalities_once(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return None
        if len(set(v)) != len(v):
            raise ValueError("a modality is listed twice")
        return [m for m in ("text", "image", "audio") if m in v]

    @field_validator("consistent")
    @classmethod
    def _all_views(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = sorted(set(v) - set(CHECKLIST_VIEWS))
        if unknown:
            raise ValueError(f"unknown view(s) {', '.join(unknown)}; views are {', '.join(CHECKLIST_VIEWS)}")
        # the views must be every non-empty view of the modalities they mention (at least two of them);
        # whether those are the item's own modalities is checked when the record is stored
        mentioned = {m for view in v for m in view.split("+")}
        expected = checklist_views_of(mentioned) if len(mentioned) >= 2 else CHECKLIST_VIEWS
        missing = [view for view in expected if view not in v]
        if missing:
            answers = "all 7 views" if len(expected) == 7 else f"all {len(expected)} views of its modalities"
            raise ValueError(f"missing view(s) {', '.join(missing)}: a checklist answers {answers}")
        out = {}
        for view in expected:
            keys = v[view]
            if len(set(keys)) != len(keys):
                raise ValueError(f"{view}: an option is listed twice")
            out[view] = sorted(keys)
        return out


class AnswerReview(_Strict):
    item: Identifier
    stage: Literal["answer_check"]
    reviewer: Identifier
    answer: str
    note: Note = ""


class GroupReview(_Strict):
    group: Identifier
    stage: Literal["group_integration"]
    reviewer: Identifier
    verdict: Verdict
    note: Note = ""


ItemReviewIn = GrammarReview | ImageScreeningReview | AudioReview | ChecklistReview | AnswerReview
ReviewIn = ItemReviewIn | GroupReview
REVIEW_MODELS: dict[str, type[BaseModel]] = {
    "grammar": GrammarReview,
    "image_screening": ImageScreeningReview,
    "audio_signoff": AudioReview,
    "subset_checklist": ChecklistReview,
    "answer_check": AnswerReview,
    "group_integration": GroupReview,
}
