"""The shared vocabulary of design.md: modalities, views, stages, states and reason codes."""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from typing import Final, Literal

MODALITIES: Final = ("text", "image", "audio")
Modality = Literal["text", "image", "audio"]


def view_name(modalities: frozenset[str] | set[str] | tuple[str, ...]) -> str:
    """The canonical name of a subset of modalities: ``text+audio``, ``none`` for the empty set."""
    ordered = [m for m in MODALITIES if m in modalities]
    return "+".join(ordered) if ordered else "none"


def view_modalities(view: str) -> frozenset[str]:
    """The modalities of a view name; raises ``ValueError`` for an unknown name."""
    if view not in ALL_VIEWS:
        raise ValueError(f"unknown view {view!r}; expected one of {', '.join(ALL_VIEWS)}")
    return frozenset() if view == "none" else frozenset(view.split("+"))


ALL_VIEWS: Final = tuple(view_name(set(c)) for k in range(0, 4) for c in combinations(MODALITIES, k))
"""``none``, the three single-modality views, the three pairs, the full view."""
FULL_VIEW: Final = "text+image+audio"
CHECKLIST_VIEWS: Final = tuple(v for v in ALL_VIEWS if v != "none")
"""The 7 non-empty views a subset-checklist reviewer answers."""
STRICT_VIEWS: Final = tuple(v for v in CHECKLIST_VIEWS if v != FULL_VIEW)


def modality_set(modalities: frozenset[str] | set[str] | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """A set of modalities in canonical order (text, image, audio)."""
    return tuple(m for m in MODALITIES if m in modalities)


@lru_cache(maxsize=64)
def _views(ordered: tuple[str, ...]) -> tuple[str, ...]:
    own = modality_set(ordered)
    return tuple(view_name(set(c)) for k in range(0, len(own) + 1) for c in combinations(own, k))


def views_of(modalities: frozenset[str] | set[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Every view of a modality set, ``none`` first and the full view last (the probe views)."""
    return _views(modalities if isinstance(modalities, tuple) else modality_set(modalities))


def checklist_views_of(modalities: frozenset[str] | set[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The non-empty views a checklist answers for an item with these modalities."""
    return views_of(modalities)[1:]


def strict_views_of(modalities: frozenset[str] | set[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The strict non-empty subsets (Definition 1 asks each to leave at least two options)."""
    return views_of(modalities)[1:-1]


# TRIAD's stages (the ``mcq`` kind); which stages exist is the kinds registry's to say (curation.kinds).
STAGES: Final = (
    "grammar",
    "image_screening",
    "audio_signoff",
    "subset_checklist",
    "answer_check",
    "group_integration",
)
Stage = Literal["grammar", "image_screening", "audio_signoff", "subset_checklist", "answer_check", "group_integration"]

STATES: Final = ("in_review", "returned", "held", "admitted", "discarded")
State = Literal["in_review", "returned", "held", "admitted", "discarded"]

ROLES: Final = ("author", "reviewer", "maintainer", "speaker", "producer")
"""``speaker``: a voice in recorded audio (consent is recorded per speaker); ``producer``: who directs voice
acting and chooses the take (TRIAD App. B.2)."""
PERTURBED: Final = ("text", "image", "audio", "mixed")
OPTION_KEYS: Final = tuple("ABCDEFGH")
AUDIO_AXES: Final = ("naturalness", "clarity", "artefacts")
IMAGE_SOURCES: Final = ("photo", "ai_generated", "drawing")
AUDIO_SOURCES: Final = ("natural", "voice_acting", "tts_edited", "tts")
COMBINE_RULES: Final = ("any", "majority", "all")

# Placeholders the probe checker and the UI show in place of a hidden modality (TRIAD G.4).
PLACEHOLDERS: Final = {
    "text": "[no text context is provided in this condition]",
    "image": "[no image is provided in this condition]",
    "audio": "[no audio is provided in this condition]",
}

NO_SPACE_CODE_POINTS: Final = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3FFFF),  # CJK extensions B and later
)
"""Code point ranges of scripts written without spaces between words: the audits tokenize them by character
(``curation.audit.tokens``), and sister comparison drops a space next to one (``curation.sister_content``)."""
