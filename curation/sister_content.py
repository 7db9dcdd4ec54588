"""What sisters of a scene group are compared on: each modality's content, not its file names or spacing.

TRIAD §3.4: sisters "perturb one modality so that the correct answer changes with the altered cue". Whether
two sisters differ in a modality is read from the content: media by their content hash (what the store keys
them by, so the same bytes under two file names are the same image), text normalized (:func:`comparable_text`).
Questions and options are templates (§3.4 allows minimal adjustments, shown to the group reviewer) and are
not part of the content. Both the group rule (``curation.kinds.mcq.group_integration``) and the audit's list
of identical sisters (``curation.audit.run``) read it from here, so they agree.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from .vocab import MODALITIES, NO_SPACE_CODE_POINTS

NO_SPACE_RANGES = (*NO_SPACE_CODE_POINTS, (0x3000, 0x303F))  # and CJK symbols and punctuation
"""Characters of scripts written without spaces between words (and their punctuation): a space next to one
carries no meaning."""
_CLASS = "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in NO_SPACE_RANGES)
_SPACE_BY_NO_SPACE = re.compile(f"(?<=[{_CLASS}]) | (?=[{_CLASS}])")


@functools.lru_cache(maxsize=8192)
def comparable_text(text: str) -> str:
    """Text as sisters are compared on it: Unicode NFKC (full-width forms become their plain ones), case
    folded, runs of whitespace folded to one space, ends stripped, and a space next to a character of a script
    without spaces (Chinese, Japanese, Thai, ...) dropped: ``"我 看见，Ｈｉ"`` and ``"我看见,hi"`` compare equal."""
    folded = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return _SPACE_BY_NO_SPACE.sub("", folded)


Content = tuple[str | None, ...]
"""One value per modality of ``MODALITIES``: the text as written (:func:`differing` and :func:`normalized`
compare it normalized) or the media's content hash; None where the item lacks the modality."""


def content(context: str, image: str | None, audio: str | None, modalities: Iterable[str] = MODALITIES) -> Content:
    """An item's content by modality (``image``/``audio``: the media's content hash)."""
    has = modalities if isinstance(modalities, tuple) else tuple(modalities)
    return (
        (context or "") if "text" in has else None,
        (image or "") if "image" in has else None,
        (audio or "") if "audio" in has else None,
    )


def normalized(value: Content) -> Content:
    """The content with its text normalized: equal for two items exactly when :func:`differing` finds nothing."""
    text = value[0]
    return value if text is None else (comparable_text(text), *value[1:])


def differing(a: Content, b: Content) -> frozenset[str]:
    """The modalities whose content differs between two items (one having a modality the other lacks counts).
    Text is compared normalized, only when it differs as written (sisters mostly share it: the status derivation
    judges every group)."""
    if a == b:
        return _NONE
    text, image, audio = a
    text_b, image_b, audio_b = b
    text_differs = text != text_b and (
        text is None or text_b is None or comparable_text(text) != comparable_text(text_b)
    )
    return _BY_FLAGS[text_differs + 2 * (image != image_b) + 4 * (audio != audio_b)]


_NONE: frozenset[str] = frozenset()
_BY_FLAGS = [frozenset(m for n, m in enumerate(MODALITIES) if flags >> n & 1) for flags in range(8)]
"""The modalities that differ, by the bit flags text 1, image 2, audio 4 (made once: ``differing`` is asked of
every pair of sisters of every group at each status derivation)."""


T = TypeVar("T")


def identical_sets(members: Sequence[T], content_of: Callable[[T], Content]) -> list[list[T]]:
    """Members with the same content in every modality, as sets of two or more, in first-member order."""
    by_content: dict[Content, list[T]] = {}
    for member in members:
        by_content.setdefault(normalized(content_of(member)), []).append(member)
    return [same for same in by_content.values() if len(same) > 1]
