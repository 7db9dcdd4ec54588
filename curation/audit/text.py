"""Text audits on item contexts: exact keys, token 3-gram shingles, MinHash-LSH near duplicates.

Tokens are words or characters by the item's language (:mod:`curation.audit.tokens`); the shingle size,
the padding and the Jaccard threshold are the same for both units."""

from __future__ import annotations

import functools
import hashlib
import math
import zlib
from collections.abc import Callable, Sequence
from itertools import chain

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
PRESCREEN_PERMS = 32
PRESCREEN_LOSS = 1e-4
"""Candidates are first estimated on the first ``PRESCREEN_PERMS`` permutations alone (a quarter of the
columns to gather) and those far below the threshold dropped: a pair at the threshold is lost this way with
probability below ``PRESCREEN_LOSS``. At 100k sets nine in ten LSH candidates are random pairs that shared
one band; the full estimate then runs on the rest."""
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


_ROWS_AT_ONCE = 1 << 13
"""Shingles permuted in one array (``num_perm`` 32-bit values each: 4 MB at 128 permutations, which stays in
a core's cache; 32 MB chunks took 1.3x the time at 100k sets)."""


def minhash_signatures(shingle_sets: Sequence[set[str]], num_perm: int = NUM_PERM) -> np.ndarray:
    """MinHash signatures, one row per set: the CRC-32 of each shingle's UTF-8, mixed, then the minimum under
    each permutation (an empty set is the set of one empty shingle).

    The values are datasketch 2's ``MinHash(num_perm, hashfunc=zlib.crc32)`` (its "affine32" scheme, seed 1;
    the tests hold them equal), computed here for many sets at once and without importing datasketch, whose
    package brings SciPy (0.4 s of every audit's and release build's start)."""
    a, b = _permutations(num_perm)
    sizes = np.fromiter((max(1, len(s)) for s in shingle_sets), dtype=np.int64, count=len(shingle_sets))
    flat = chain.from_iterable(s or ("",) for s in shingle_sets)
    # map() over C functions: no Python frame per shingle (half the time of a generator expression)
    hashes = np.fromiter(map(zlib.crc32, map(str.encode, flat)), dtype=np.uint32, count=int(sizes.sum()))
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


def _bucket_pairs(keys: np.ndarray) -> np.ndarray:
    """Codes ``i * n + j`` (``i < j``) of the index pairs whose keys are equal, every bucket expanded at once.

    Each member of a bucket is paired with the members after it in sorted order (``np.repeat`` of the
    counts), so the work is one sort plus the pairs themselves, with no Python loop over buckets."""
    n = len(keys)
    order = np.argsort(keys)  # any order within a bucket: each pair is written smaller index first
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    sizes = np.diff(np.append(starts, n))
    ends = np.repeat(starts + sizes, sizes)  # each sorted position's bucket end
    later = ends - np.arange(n) - 1  # members after it in its bucket
    total = int(later.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    first = np.repeat(np.arange(n), later)
    offsets = np.arange(total) - np.repeat(np.cumsum(later) - later, later)
    a, b = order[first], order[first + 1 + offsets]
    return np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b)


def _band_candidates(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """Pairs ``(i, j)``, ``i < j``, that agree on every row of at least one band (vectorized banding)."""
    n = len(signatures)
    banded = signatures[:, : bands * rows].reshape(n, bands, rows)
    keys = np.zeros((n, bands), dtype=np.uint64)
    for column in range(rows):  # multiplicative mixing; a rare key collision is removed by verification
        keys = keys * np.uint64(0x9E3779B97F4A7C15) + banded[:, :, column] + np.uint64(column + 1)
    found = [_bucket_pairs(band_keys) for band_keys in np.ascontiguousarray(keys.T)]
    codes = np.unique(np.concatenate(found))
    return np.stack([codes // n, codes % n], axis=1)


def _agreement(compact: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The fraction of columns on which each candidate pair's rows agree (the MinHash estimate)."""
    estimate = np.empty(len(candidates))
    for start in range(0, len(candidates), 100_000):
        chunk = candidates[start : start + 100_000]
        estimate[start : start + len(chunk)] = (compact[chunk[:, 0]] == compact[chunk[:, 1]]).mean(axis=1)
    return estimate


@functools.lru_cache(maxsize=16)
def _prescreen_minimum(threshold: float) -> int:
    """The most agreements of :data:`PRESCREEN_PERMS` that a pair at Jaccard ``threshold`` falls short of
    with probability at most :data:`PRESCREEN_LOSS` (binomial tail; 6 of 32 at 0.5)."""
    tail, needed = 0.0, 0
    while True:
        chance = math.comb(PRESCREEN_PERMS, needed) * threshold**needed * (1 - threshold) ** (PRESCREEN_PERMS - needed)
        if tail + chance > PRESCREEN_LOSS:
            return needed
        tail += chance
        needed += 1


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
    # the low byte of each value: a quarter of the memory to gather; unequal values agree there with chance
    # 1/256, which raises an estimate by about 0.002 and so only sends a few more pairs to exact verification
    compact = signatures.astype(np.uint8)
    if num_perm >= 2 * PRESCREEN_PERMS:
        agree = _agreement(compact[:, :PRESCREEN_PERMS], candidates)
        candidates = candidates[agree >= _prescreen_minimum(threshold) / PRESCREEN_PERMS]
    candidates = candidates[_agreement(compact, candidates) >= threshold - ESTIMATE_MARGIN]
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
