"""Text audits on item contexts: exact keys, token 3-gram shingles, MinHash-LSH near duplicates.

Tokens are words or characters by the item's language (:mod:`curation.audit.tokens`); the shingle size,
the padding and the Jaccard threshold are the same for both units."""

from __future__ import annotations

import functools
import hashlib
import zlib
from collections.abc import Callable, Sequence

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


_SEED = 1
"""MinHash's permutations are drawn from ``numpy.random.RandomState(_SEED)``, as datasketch draws them."""


@functools.lru_cache(maxsize=4)
def _permutations(num_perm: int) -> tuple[np.ndarray, np.ndarray]:
    """The affine permutations ``h -> a * h + b mod 2**32`` (``a`` odd: a bijection)."""
    draw = np.random.RandomState(_SEED)
    a = draw.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = draw.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return a, b


def _mix32(hashes: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer (a bijection that spreads CRC-32's structure over every bit)."""
    hashes = hashes ^ (hashes >> np.uint32(16))
    hashes = hashes * np.uint32(0x85EBCA6B)
    hashes = hashes ^ (hashes >> np.uint32(13))
    hashes = hashes * np.uint32(0xC2B2AE35)
    return hashes ^ (hashes >> np.uint32(16))


_ROWS_AT_ONCE = 1 << 16
"""Shingles permuted in one array (``num_perm`` 32-bit values each: 32 MB at 128 permutations)."""


def minhash_signatures(shingle_sets: Sequence[set[str]], num_perm: int = NUM_PERM) -> np.ndarray:
    """MinHash signatures, one row per set: the CRC-32 of each shingle's UTF-8, mixed, then the minimum under
    each permutation (an empty set is the set of one empty shingle).

    The values are datasketch 2's ``MinHash(num_perm, hashfunc=zlib.crc32)`` (its "affine32" scheme, seed 1;
    the tests hold them equal), computed here for many sets at once and without importing datasketch, whose
    package brings SciPy (0.4 s of every audit's and release build's start)."""
    a, b = _permutations(num_perm)
    sizes = np.fromiter((max(1, len(s)) for s in shingle_sets), dtype=np.int64, count=len(shingle_sets))
    hashes = np.fromiter(
        (zlib.crc32(shingle.encode("utf-8")) for s in shingle_sets for shingle in (s or ("",))),
        dtype=np.uint32,
        count=int(sizes.sum()),
    )
    mixed = _mix32(hashes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    out = np.empty((len(sizes), num_perm), dtype=np.uint64)
    first = 0
    while first < len(sizes):  # whole sets per chunk, about _ROWS_AT_ONCE shingles each
        last = max(first + 1, int(np.searchsorted(starts, starts[first] + _ROWS_AT_ONCE, side="right")))
        lo, hi = starts[first], starts[last - 1] + sizes[last - 1]
        permuted = a[:, None] * mixed[None, lo:hi]  # one row per permutation: reduced along contiguous memory
        permuted += b[:, None]
        out[first:last] = np.minimum.reduceat(permuted, starts[first:last] - lo, axis=1).T
        first = last
    return out


@functools.lru_cache(maxsize=16)
def lsh_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """The band layout (bands, rows), ``bands * rows <= num_perm``, that minimizes the weighted chances of a
    false candidate and of a missed pair (``LSH_WEIGHTS``): datasketch's ``MinHashLSH`` layout.

    Both chances are integrals of polynomials of degree ``bands * rows`` at most, which Gauss-Legendre
    quadrature with ``num_perm // 2 + 1`` nodes integrates exactly (up to rounding); datasketch integrates
    them with SciPy's adaptive quadrature, one layout at a time. The tests hold the two layouts equal."""
    nodes, weights = np.polynomial.legendre.leggauss(num_perm // 2 + 1)
    layouts = [(bands, rows) for bands in range(1, num_perm + 1) for rows in range(1, num_perm // bands + 1)]
    bands = np.array([layout[0] for layout in layouts], dtype=float)[:, None]
    rows = np.array([layout[1] for layout in layouts], dtype=float)[:, None]

    def integral(lo: float, hi: float, chance: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        return (hi - lo) / 2 * (chance((hi - lo) / 2 * nodes + (hi + lo) / 2) @ weights)

    false_positive = integral(0.0, threshold, lambda s: 1 - (1 - s**rows) ** bands)
    false_negative = integral(threshold, 1.0, lambda s: 1 - (1 - (1 - s**rows) ** bands))
    error = false_positive * LSH_WEIGHTS[0] + false_negative * LSH_WEIGHTS[1]
    found = layouts[int(np.argmin(error))]  # the first of equals, as datasketch keeps the first
    if found[0] < 2:
        raise ValueError(f"near-duplicate threshold {threshold} leaves fewer than 2 bands of {num_perm} permutations")
    return found


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
