"""Hypothesis strategies for hostile text: every line separator, control characters, astral characters."""

from __future__ import annotations

from hypothesis import strategies as st

LINE_BREAKERS = ["\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
ASTRAL = ["\U0001f600", "\U00010348", "\U0001d11e", "\U000e0001", "\U0010fffd"]

characters = st.one_of(
    st.sampled_from(LINE_BREAKERS + ASTRAL + ["\t", "\x7f", "\ufeff", "\u200b", '"', "\\"]),
    st.characters(exclude_categories=("Cs",), exclude_characters="\x00"),
)
"""Any Unicode scalar but NUL (refused on import, on every database: see curation/jsonl.py)."""


def framed(min_size: int = 0) -> st.SearchStrategy[str]:
    """Hostile text between two letters, so that the validators' trimming of the ends does not apply."""
    return st.text(characters, min_size=min_size, max_size=40).map(lambda text: f"A{text}Z")
