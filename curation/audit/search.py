"""Sub-quadratic near-duplicate search per modality over precomputed signatures (indices in, pairs out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .audio import (
    CHROMAPRINT_MAX_BER,
    COARSE_RADIUS,
    SPECTRAL_MAX_BER,
    AudioSignature,
    chromaprint_bit_error_rate,
    frame_bit_error_rate,
)
from .hamming import pairs_within
from .image import HASH_RADIUS, ImageSignature, hash_pools

CHROMAPRINT_MIN_SHARED = 0.1
"""Candidates share at least this fraction of the shorter print's distinct 32-bit values (at least 2)."""
CHROMAPRINT_STOP_FRACTION = 0.01
"""Values held by more than this fraction of prints (and more than 50) carry no identity (silence, hum)."""


def image_pairs(signatures: Sequence[ImageSignature]) -> list[tuple[int, int, str, float]]:
    """``(i, j, method, distance)`` for pHash (of the whole or a centre crop) or dHash within
    :data:`HASH_RADIUS` bits."""
    found: dict[tuple[int, int], tuple[str, float]] = {}
    for method, hashes, owner in hash_pools(list(signatures)):
        for a, b, d in pairs_within(hashes, HASH_RADIUS).tolist():
            i, j = sorted((int(owner[a]), int(owner[b])))
            if i != j and ((i, j) not in found or d < found[(i, j)][1]):
                found[(i, j)] = (method, float(d))
    return [(i, j, method, d) for (i, j), (method, d) in sorted(found.items())]


def spectral_pairs(signatures: Sequence[AudioSignature]) -> list[tuple[int, int, float]]:
    """Coarse 64-bit hash within :data:`COARSE_RADIUS`, verified by the frame bit error rate."""
    hashes = np.array([s.coarse for s in signatures], dtype=np.uint64)
    found = []
    for i, j, _ in pairs_within(hashes, COARSE_RADIUS).tolist():
        ber = frame_bit_error_rate(signatures[i], signatures[j])
        if ber <= SPECTRAL_MAX_BER:
            found.append((i, j, ber))
    return found


def chromaprint_pairs(prints: Sequence[Sequence[int] | None]) -> list[tuple[int, int, float]]:
    """Inverted index on raw chromaprint values, candidates verified by the aligned bit error rate."""
    distinct = [np.unique(np.asarray(p, dtype=np.int64)) if p else np.empty(0, np.int64) for p in prints]
    if not any(len(d) for d in distinct):
        return []
    values = np.concatenate(distinct)
    owners = np.concatenate([np.full(len(d), i) for i, d in enumerate(distinct)])
    order = np.argsort(values, kind="stable")
    values, owners = values[order], owners[order]
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    sizes = np.diff(np.append(starts, len(values)))
    stop = max(50, int(CHROMAPRINT_STOP_FRACTION * len(prints)))
    pairs = [np.stack([owners[starts[sizes == 2]], owners[starts[sizes == 2] + 1]], axis=1)]
    for start, size in zip(
        starts[(sizes > 2) & (sizes <= stop)].tolist(), sizes[(sizes > 2) & (sizes <= stop)].tolist(), strict=True
    ):
        a, b = np.triu_indices(size, k=1)
        members = owners[start : start + size]
        pairs.append(np.stack([members[a], members[b]], axis=1))
    both = np.sort(np.concatenate(pairs), axis=1)
    unique, counts = np.unique(both, axis=0, return_counts=True)
    shared = dict(zip(map(tuple, unique.tolist()), counts.tolist(), strict=True))
    found = []
    for (i, j), count in shared.items():
        needed = max(2, CHROMAPRINT_MIN_SHARED * min(len(distinct[i]), len(distinct[j])))
        if count >= needed:
            ber = chromaprint_bit_error_rate(list(prints[i] or []), list(prints[j] or []))
            if ber <= CHROMAPRINT_MAX_BER:
                found.append((min(i, j), max(i, j), ber))
    return sorted(found)
