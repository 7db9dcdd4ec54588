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


def default_blocks(radius: int) -> int:
    """Enough blocks that each is probed within radius 1 (cheap probes, long keys, small buckets)."""
    return max(4, (radius + 2) // 2)


class _Block:
    """One block's keys, sorted, with a way to find each probe's bucket."""

    def __init__(self, keys: np.ndarray, width: int) -> None:
        self.keys, self.width = keys, width
        # a stable sort of 16-bit keys is a radix sort in numpy: several times faster than on int64
        self.order = np.argsort(keys.astype(np.uint16) if width <= 16 else keys, kind="stable")
        self.sorted_keys = keys[self.order]
        if width <= DENSE_TABLE_BITS:
            self.sizes = np.bincount(keys, minlength=1 << width)
            self.starts = np.cumsum(self.sizes) - self.sizes

    def buckets(self, probes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start (in ``order``) and size of each probe's bucket."""
        if self.width <= DENSE_TABLE_BITS:
            return self.starts[probes], self.sizes[probes]
        starts = np.searchsorted(self.sorted_keys, probes, side="left")
        return starts, np.searchsorted(self.sorted_keys, probes, side="right") - starts

    def hits(self, radius: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(owner, bucket start, bucket size) for every non-empty bucket probed within ``radius``.

        For radius 1 each item probes its own key and its key with one of its *set* bits cleared: of two
        keys one bit apart exactly one has that bit set, so each such pair is probed once, not twice.
        """
        n = len(self.keys)
        if radius == 1 and self.width <= DENSE_TABLE_BITS:
            keys = self.keys.astype(np.int32)  # 32-bit arithmetic halves the memory traffic here
            table = self.sizes.astype(np.int32)
            own = table[keys]
            owners = np.flatnonzero(own > 1)
            flips = np.left_shift(np.int32(1), np.arange(self.width, dtype=np.int32))
            probes = keys[:, None] ^ flips[None, :]
            sizes = table[probes]
            sizes[(keys[:, None] & flips[None, :]) == 0] = 0
            rows, cols = np.nonzero(sizes)
            probed = probes[rows, cols]
            return [
                (owners, self.starts[keys[owners]], own[owners].astype(np.int64)),
                (rows, self.starts[probed], sizes[rows, cols].astype(np.int64)),
            ]
        masks = _flip_masks(self.width, radius)
        owners = np.repeat(np.arange(n), len(masks))
        starts, sizes = self.buckets((self.keys[:, None] ^ masks[None, :]).ravel())
        hit = sizes > 0
        return [(owners[hit], starts[hit], sizes[hit])]


def pairs_within(hashes: np.ndarray, radius: int, blocks: int | None = None) -> np.ndarray:
    """All pairs ``(i, j, distance)`` with ``i < j`` and Hamming distance <= radius, as an (k, 3) array."""
    values = np.asarray(hashes, dtype=np.uint64)
    n = len(values)
    if n < 2:
        return np.empty((0, 3), dtype=np.int64)
    blocks = blocks or default_blocks(radius)
    found = []
    shift = 0
    for width in _block_widths(blocks):
        keys = ((values >> np.uint64(shift)) & np.uint64((1 << width) - 1)).astype(np.int64)
        shift += width
        block = _Block(keys, width)
        for owners, starts, sizes in block.hits(radius // blocks):
            total = int(sizes.sum())
            if total == 0:
                continue
            a = np.repeat(owners, sizes)
            offsets = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            b = block.order[np.repeat(starts, sizes) + offsets]
            a, b = np.minimum(a, b), np.maximum(a, b)
            distance = np.bitwise_count(values[a] ^ values[b]).astype(np.int64)
            close = (distance <= radius) & (a != b)
            found.append(np.stack([a[close], b[close], distance[close]], axis=1))
    if not found:
        return np.empty((0, 3), dtype=np.int64)
    rows = np.concatenate(found)
    # one pair may be found through several blocks: keep it once (a 1-D unique on a*n+b beats a row unique)
    _, first = np.unique(rows[:, 0] * n + rows[:, 1], return_index=True)
    return rows[first]


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
