"""How text audits cut text into tokens: words for space-separated scripts, characters for the others.

The item's ``language`` (BCP 47) decides the unit: Chinese, Japanese, Thai, Lao, Khmer, Burmese and
Tibetan write no spaces between words, so their tokens are single characters (Latin words and numbers
inside such text stay whole words); every other language is cut into ``\\w+`` words. A missing or
``und`` tag falls back to the text's script: characters when most of its letters belong to a script
without spaces. Every text audit (near duplicates, shared spans, option leaks, the story audits) tokenizes
through :func:`tokens`, so an audit's acceptance rule means the same for every language.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from ..vocab import NO_SPACE_CODE_POINTS

TokenUnit = Literal["words", "characters"]

NO_SPACE_LANGUAGES = frozenset(
    {"zh", "ja", "th", "lo", "km", "my", "bo", "dz", "yue", "wuu", "cmn", "lzh", "hak", "nan", "gan", "hsn", "cjy"}
)
"""Primary language subtags whose writing puts no spaces between words."""
NO_SPACE_SCRIPTS = frozenset({"hans", "hant", "hani", "jpan", "hira", "kana", "thai", "laoo", "khmr", "mymr", "tibt"})
"""ISO 15924 script subtags (lower case) of scripts without spaces: they decide over the language."""
SPACED_SCRIPTS = frozenset({"latn", "cyrl", "grek", "arab", "hebr", "deva", "hang", "kore", "armn", "geor", "ethi"})

_NO_SPACE_RANGES = NO_SPACE_CODE_POINTS
_WORD = re.compile(r"\w+")
_CLASS = "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in _NO_SPACE_RANGES)
_NO_SPACE = re.compile(f"[{_CLASS}]")
_MIXED = re.compile(f"[{_CLASS}]|[^\\W{_CLASS}]+")
"""One character of a script without spaces, or a run of other word characters (a Latin word, a number)."""


def normalize_text(text: str) -> str:
    """Unicode NFKC, case folded, runs of whitespace folded to one space, ends stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def is_no_space_character(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _NO_SPACE_RANGES)


def _unit_of_script(text: str) -> TokenUnit:
    letters = sum(len(run) for run in _WORD.findall(text))
    no_space = len(_NO_SPACE.findall(text))
    return "characters" if letters and 2 * no_space >= letters else "words"


def token_unit(language: str | None, text: str = "") -> TokenUnit:
    """The unit for text in ``language``; the text's script decides when the tag says nothing."""
    subtags = [s.lower() for s in (language or "").replace("_", "-").split("-") if s]
    scripts = [s for s in subtags[1:] if len(s) == 4 and s.isalpha()]
    if scripts and scripts[0] in NO_SPACE_SCRIPTS:
        return "characters"
    if scripts and scripts[0] in SPACED_SCRIPTS:
        return "words"
    if subtags and subtags[0] not in ("und", "mul", "zxx", "mis"):
        return "characters" if subtags[0] in NO_SPACE_LANGUAGES else "words"
    return _unit_of_script(text)


def tokens(text: str, language: str | None = None) -> list[str]:
    """Tokens of the normalized text in its language's unit; punctuation and spaces are dropped."""
    normalized = normalize_text(text)
    if token_unit(language, normalized) == "words":
        return _WORD.findall(normalized)
    return _MIXED.findall(normalized)


def join_tokens(found: list[str] | tuple[str, ...]) -> str:
    """Tokens back into quotable text: characters of scripts without spaces run together, words take a space."""
    text = ""
    for token in found:
        glue = "" if not text or is_no_space_character(text[-1]) or is_no_space_character(token[0]) else " "
        text = f"{text}{glue}{token}"
    return text
