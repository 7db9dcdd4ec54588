"""Text audits on item contexts: exact keys, token 3-gram shingles, MinHash-LSH near duplicates.

Tokens are words or characters by the item's language (:mod:`curation.audit.tokens`); the shingle size,
the padding and the Jaccard threshold are the same for both units."""

from __future__ import annotations

import functools
import hashlib
import zlib
from collections.abc import Sequence

import numpy as np

from .tokens import normalize_text, tokens

SHINGLE_WORDS = 3
NEAR_DUPLICATE_JACCARD = 0.5
NUM_PERM = 128
LSH_WEIGHTS = (0.01, 0.99)
"""39 bands of 3 rows: a pair at Jaccard 0.5 is proposed with probability 0.995, at 0.55 with 0.999;
false candidates cost only their exact re-verification."""
ESTIMATE_MARGIN = 0.15
"""Candidates whose MinHash estimate is this far below the threshold are not verified: with 128
permutations the estimate's standard deviation at Jaccard 0.5 is 0.044, so a true pair is lost this way
with probability below 0.0005."""
_BOUNDARY = "\x02"
"""Padding word at both ends: the first and last words then sit in as many shingles as any other, so a
one-word change in a ten-word context still leaves Jaccard >= 0.5 (9 of 15 padded shingles agree)."""


def text_key(text: str) -> str:
    """SHA-256 of the normalized text: equal keys mean the same words in the same order and spacing."""
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def words(text: str, language: str | None = None) -> list[str]:
    """Tokens of the normalized text (words, or characters for scripts without spaces); no punctuation."""
    return tokens(text, language)


def shingles(tokens: Sequence[str], size: int = SHINGLE_WORDS) -> set[str]:
    """Token ``size``-grams of the tokens padded with ``size - 1`` boundary words on each side."""
    if not tokens:
        return set()
    padded = [_BOUNDARY] * (size - 1) + list(tokens) + [_BOUNDARY] * (size - 1)
    return {" ".join(padded[i : i + size]) for i in range(len(padded) - size + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def minhash_signatures(shingle_sets: Sequence[set[str]], num_perm: int = NUM_PERM) -> np.ndarray:
    """datasketch MinHash signatures, one row per set (CRC-32 as the base hash: deterministic and fast)."""
    from datasketch import MinHash

    encoded = [[s.encode("utf-8") for s in sh] or [b""] for sh in shingle_sets]
    sketches = MinHash.bulk(encoded, num_perm=num_perm, hashfunc=zlib.crc32)
    return np.stack([m.hashvalues for m in sketches]).astype(np.uint64)


@functools.lru_cache(maxsize=16)
def lsh_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """datasketch's band layout (bands, rows) for the threshold, weighted against missed pairs.

    Kept per process: datasketch finds it by numeric integration over every layout (tens of milliseconds,
    the audit gate's largest fixed cost in a release rebuild), and it depends on nothing else.
    """
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=LSH_WEIGHTS)
    return lsh.b, lsh.r


def _pairs_in_buckets(keys: np.ndarray) -> np.ndarray:
    """Index pairs ``(i, j)``, ``i < j``, whose keys are equal (buckets of two vectorized, larger looped)."""
    n = len(keys)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    sizes = np.diff(np.append(starts, n))
    found = [np.stack([order[starts[sizes == 2]], order[starts[sizes == 2] + 1]], axis=1)]
    for start, size in zip(starts[sizes > 2].tolist(), sizes[sizes > 2].tolist(), strict=True):
        members = order[start : start + size]
        a, b = np.triu_indices(size, k=1)
        found.append(np.stack([members[a], members[b]], axis=1))
    return np.sort(np.concatenate(found), axis=1)


def _band_candidates(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """Pairs ``(i, j)``, ``i < j``, that agree on every row of at least one band (vectorized banding)."""
    found = []
    for band in range(bands):
        block = signatures[:, band * rows : (band + 1) * rows]
        keys = np.zeros(len(signatures), dtype=np.uint64)
        for column in range(rows):  # multiplicative mixing; a rare key collision is removed by verification
            keys = keys * np.uint64(0x9E3779B97F4A7C15) + block[:, column] + np.uint64(column + 1)
        found.append(_pairs_in_buckets(keys))
    candidates = np.concatenate(found)
    if len(candidates) == 0:
        return candidates.reshape(0, 2)
    return np.unique(candidates, axis=0)


def near_duplicate_pairs(
    shingle_sets: Sequence[set[str]],
    threshold: float = NEAR_DUPLICATE_JACCARD,
    num_perm: int = NUM_PERM,
    groups: Sequence[int] | None = None,
) -> list[tuple[int, int, float]]:
    """Pairs ``(i, j, jaccard)`` with exact Jaccard >= threshold, found through MinHash LSH.

    LSH banding proposes candidates in near-linear time; candidates whose MinHash estimate is far below
    the threshold are dropped (vectorized), and the rest are verified on the exact shingle sets, so a
    reported pair is never a MinHash estimation artefact. With ``groups`` (one integer per set), pairs
    within one group are dropped before any verification (sisters, pages of one book).
    """
    if len(shingle_sets) < 2:
        return []
    bands, rows = lsh_bands(threshold, num_perm)
    signatures = minhash_signatures(shingle_sets, num_perm)
    candidates = _band_candidates(signatures, bands, rows)
    if groups is not None and len(candidates):
        owner = np.asarray(groups)
        candidates = candidates[owner[candidates[:, 0]] != owner[candidates[:, 1]]]
    estimate = np.empty(len(candidates))
    for start in range(0, len(candidates), 100_000):
        chunk = candidates[start : start + 100_000]
        estimate[start : start + len(chunk)] = (signatures[chunk[:, 0]] == signatures[chunk[:, 1]]).mean(axis=1)
    candidates = candidates[estimate >= threshold - ESTIMATE_MARGIN]
    pairs: list[tuple[int, int, float]] = []
    for i, j in candidates.tolist():
        if shingle_sets[i] and shingle_sets[j]:
            similarity = jaccard(shingle_sets[i], shingle_sets[j])
            if similarity >= threshold:
                pairs.append((i, j, similarity))
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
