"""Multi-index hashing finds exactly the pairs an all-pairs scan finds."""

from __future__ import annotations

import numpy as np
import pytest

from curation.audit.hamming import pairs_within, pairs_within_all_pairs


@pytest.mark.parametrize("radius", [0, 3, 7, 9, 12])
def test_radius_search_equals_all_pairs(radius: int) -> None:
    rng = np.random.default_rng(radius)
    hashes = rng.integers(0, 2**63, 3000, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    for k in range(200):  # planted neighbours at every distance up to radius + 2
        flips = rng.choice(64, size=k % (radius + 3), replace=False)
        value = int(hashes[k])
        for bit in flips:
            value ^= 1 << int(bit)
        hashes[2000 + k] = np.uint64(value)
    found = pairs_within(hashes, radius)
    expected = pairs_within_all_pairs(hashes, radius)
    assert len(expected) >= 200 * (radius + 1) // (radius + 3)
    assert sorted(map(tuple, found.tolist())) == sorted(map(tuple, expected.tolist()))
    assert (found[:, 2] <= radius).all()
