"""Text audits on item contexts: exact keys, word 3-gram shingles, MinHash-LSH near duplicates."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence

SHINGLE_WORDS = 3
NEAR_DUPLICATE_JACCARD = 0.5
NUM_PERM = 128
LSH_WEIGHTS = (0.01, 0.99)
"""39 bands of 3 rows: a pair at Jaccard 0.5 is proposed with probability 0.995, at 0.55 with 0.999;
false candidates cost only their exact re-verification."""
_BOUNDARY = "\x02"
"""Padding word at both ends: the first and last words then sit in as many shingles as any other, so a
one-word change in a ten-word context still leaves Jaccard >= 0.5 (9 of 15 padded shingles agree)."""
_WORD = re.compile(r"\w+")


def normalize_text(text: str) -> str:
    """Unicode NFKC, case folded, runs of whitespace folded to one space, ends stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_key(text: str) -> str:
    """SHA-256 of the normalized text: equal keys mean the same words in the same order and spacing."""
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def words(text: str) -> list[str]:
    """Word tokens of the normalized text; punctuation is dropped."""
    return _WORD.findall(normalize_text(text))


def shingles(tokens: Sequence[str], size: int = SHINGLE_WORDS) -> set[str]:
    """Word ``size``-grams of the tokens padded with ``size - 1`` boundary words on each side."""
    if not tokens:
        return set()
    padded = [_BOUNDARY] * (size - 1) + list(tokens) + [_BOUNDARY] * (size - 1)
    return {" ".join(padded[i : i + size]) for i in range(len(padded) - size + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def near_duplicate_pairs(
    shingle_sets: Sequence[set[str]],
    threshold: float = NEAR_DUPLICATE_JACCARD,
    num_perm: int = NUM_PERM,
) -> list[tuple[int, int, float]]:
    """Pairs ``(i, j, jaccard)`` with exact Jaccard >= threshold, found through MinHash LSH.

    LSH proposes candidates in near-linear time; every candidate is then verified on the exact
    shingle sets, so a reported pair is never a MinHash estimation artefact.
    """
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=LSH_WEIGHTS)
    encoded = [[s.encode("utf-8") for s in sh] for sh in shingle_sets]
    sketches = MinHash.bulk(encoded, num_perm=num_perm)
    pairs: list[tuple[int, int, float]] = []
    for index, (sketch, shingle_set) in enumerate(zip(sketches, shingle_sets, strict=True)):
        if not shingle_set:
            continue
        for other in lsh.query(sketch):
            similarity = jaccard(shingle_set, shingle_sets[other])
            if similarity >= threshold:
                pairs.append((other, index, similarity))
        lsh.insert(index, sketch, check_duplication=False)
    return pairs


def spans(tokens: Sequence[str], size: int) -> dict[tuple[str, ...], int]:
    """Every contiguous ``size``-word span with the position of its first occurrence."""
    found: dict[tuple[str, ...], int] = {}
    for i in range(len(tokens) - size + 1):
        found.setdefault(tuple(tokens[i : i + size]), i)
    return found


def contains_phrase(tokens: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether ``phrase`` occurs in ``tokens`` as whole consecutive words."""
    n = len(phrase)
    if n == 0:
        return False
    return any(list(tokens[i : i + n]) == list(phrase) for i in range(len(tokens) - n + 1))
