"""Exact radius search over 64-bit hashes by multi-index hashing (Norouzi et al., 2012), vectorized.

The 64 bits are cut into ``m`` blocks. If two hashes differ in at most ``r`` bits, some block differs in
at most ``floor(r / m)`` bits (pigeonhole), so probing every block within that small radius finds every
pair — no pair is missed and no pair of unrelated hashes is compared beyond its block collisions.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np


def _block_widths(blocks: int) -> list[int]:
    return [64 // blocks + (1 if i < 64 % blocks else 0) for i in range(blocks)]


def _flip_masks(width: int, radius: int) -> np.ndarray:
    masks = [0]
    for k in range(1, radius + 1):
        masks.extend(sum(1 << b for b in bits) for bits in combinations(range(width), k))
    return np.asarray(masks, dtype=np.int64)


DENSE_TABLE_BITS = 22
"""Blocks up to this width get a direct bucket table (O(1) probes); wider ones use binary search."""


def _buckets(sorted_keys: np.ndarray, probes: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and size of each probe's bucket in ``sorted_keys``."""
    if width <= DENSE_TABLE_BITS:
        table = np.searchsorted(sorted_keys, np.arange((1 << width) + 1), side="left")
        return table[probes], table[probes + 1] - table[probes]
    starts = np.searchsorted(sorted_keys, probes, side="left")
    return starts, np.searchsorted(sorted_keys, probes, side="right") - starts


def default_blocks(radius: int) -> int:
    """Enough blocks that each is probed within radius 1 (cheap probes, long keys, small buckets)."""
    return max(4, (radius + 2) // 2)


def _probes(keys: np.ndarray, width: int, radius: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(owner, probe key) arrays whose bucket hits cover every pair within ``radius`` in this block.

    For radius 1 each item probes its own key and its key with one of its *set* bits cleared: of two
    keys one bit apart exactly one has that bit set, so each such pair is probed once instead of twice.
    """
    n = len(keys)
    if radius == 1:
        owners, bits = np.nonzero((keys[:, None] >> np.arange(width)[None, :]) & 1)
        return [(np.arange(n), keys), (owners, keys[owners] ^ (np.int64(1) << bits))]
    masks = _flip_masks(width, radius)
    return [(np.repeat(np.arange(n), len(masks)), (keys[:, None] ^ masks[None, :]).ravel())]


def pairs_within(hashes: np.ndarray, radius: int, blocks: int | None = None) -> np.ndarray:
    """All pairs ``(i, j, distance)`` with ``i < j`` and Hamming distance <= radius, as an (k, 3) array."""
    values = np.asarray(hashes, dtype=np.uint64)
    n = len(values)
    if n < 2:
        return np.empty((0, 3), dtype=np.int64)
    blocks = blocks or default_blocks(radius)
    probe_radius = radius // blocks
    found = []
    shift = 0
    for width in _block_widths(blocks):
        keys = ((values >> np.uint64(shift)) & np.uint64((1 << width) - 1)).astype(np.int64)
        shift += width
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        for owners, probes in _probes(keys, width, probe_radius):
            starts, counts = _buckets(sorted_keys, probes, width)
            hit = counts > 0
            owners, starts, counts = owners[hit], starts[hit], counts[hit]
            total = int(counts.sum())
            if total == 0:
                continue
            a = np.repeat(owners, counts)
            offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
            b = order[np.repeat(starts, counts) + offsets]
            a, b = np.minimum(a, b), np.maximum(a, b)
            distance = np.bitwise_count(values[a] ^ values[b]).astype(np.int64)
            close = (distance <= radius) & (a != b)
            found.append(np.stack([a[close], b[close], distance[close]], axis=1))
    if not found:
        return np.empty((0, 3), dtype=np.int64)
    return np.unique(np.concatenate(found), axis=0)


def pairs_within_all_pairs(hashes: np.ndarray, radius: int, chunk: int = 1024) -> np.ndarray:
    """The all-pairs reference for :func:`pairs_within` (tests and the benchmark's baseline)."""
    values = np.asarray(hashes, dtype=np.uint64)
    found = []
    for start in range(0, len(values), chunk):
        block = values[start : start + chunk]
        distance = np.bitwise_count(block[:, None] ^ values[None, :])
        a, b = np.nonzero(distance <= radius)
        a = a + start
        forward = a < b
        found.append(np.stack([a[forward], b[forward], distance[a[forward] - start, b[forward]]], axis=1))
    if not found:
        return np.empty((0, 3), dtype=np.int64)
    return np.concatenate(found).astype(np.int64)
