"""Text duplicates on contexts: normalization, exact keys, MinHash-LSH near duplicates."""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from datasketch import MinHash, MinHashLSH
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.audit import text as text_module
from curation.audit.text import (
    LSH_WEIGHTS,
    NEAR_DUPLICATE_JACCARD,
    NUM_PERM,
    jaccard,
    lsh_bands,
    minhash_signatures,
    near_duplicate_pairs,
    normalize_text,
    shingles,
    text_key,
    words,
)

ROOT = Path(__file__).resolve().parents[3]


def test_normalization_folds_unicode_case_and_whitespace() -> None:
    assert normalize_text("  Ｓｕｒｅ,\tthat   WAS\nﬁne ") == "sure, that was fine"
    assert text_key("Straße  ok") == text_key("STRASSE ok")
    assert text_key("a b") != text_key("a c")


def test_one_word_change_in_a_ten_word_context_still_matches() -> None:
    a = "The old man said the kettle was boiling again today."
    b = "the OLD man said - the kettle was BURNING again today!"
    assert len(words(a)) == 10
    assert jaccard(shingles(words(a)), shingles(words(b))) >= 0.5
    pairs = near_duplicate_pairs([shingles(words(a)), shingles(words(b))])
    assert [(i, j) for i, j, _ in pairs] == [(0, 1)]


def test_look_alike_contexts_are_not_near_duplicates() -> None:
    texts = [
        "The old man said the kettle was boiling again today.",
        "The old woman said the garden was flooded again yesterday.",
        "A young man said the kettle had never worked at all.",
        "The old man said nothing about the kettle or the stove.",
    ]
    sets = [shingles(words(t)) for t in texts]
    assert near_duplicate_pairs(sets) == []


def test_lsh_finds_what_all_pairs_finds() -> None:
    import random

    rng = random.Random(0)
    vocabulary = [f"w{i}" for i in range(400)]
    base = [[rng.choice(vocabulary) for _ in range(rng.randint(12, 30))] for _ in range(300)]
    texts = base + [t[:3] + ["changed"] + t[4:] for t in base[:40]]
    sets = [shingles(t) for t in texts]
    truth = {(i, j) for i in range(len(sets)) for j in range(i + 1, len(sets)) if jaccard(sets[i], sets[j]) >= 0.5}
    found = {(i, j) for i, j, _ in near_duplicate_pairs(sets)}
    assert len(truth) >= 40
    assert found <= truth
    assert len(found) >= 0.98 * len(truth)


# ----- the MinHash and the band layout are datasketch's, computed without it -----------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sets(st.text(alphabet="ab 中文\x02é", max_size=9), max_size=30), max_size=40),
    st.sampled_from([16, 128]),
    st.integers(min_value=1, max_value=64),
)
def test_minhash_signatures_are_datasketchs(sets: list[set[str]], num_perm: int, rows_at_once: int) -> None:
    """Chinese and English shingles, empty sets, any chunking: the same values as datasketch 2's MinHash."""
    encoded = [[s.encode("utf-8") for s in shingle_set] or [b""] for shingle_set in sets]
    expected = [m.hashvalues.astype(np.uint64) for m in MinHash.bulk(encoded, num_perm=num_perm, hashfunc=zlib.crc32)]
    with patch.object(text_module, "_ROWS_AT_ONCE", rows_at_once):
        found = minhash_signatures(sets, num_perm)
    assert found.shape == (len(sets), num_perm) and found.dtype == np.uint64
    assert [list(row) for row in found] == [list(row) for row in expected]


@pytest.mark.parametrize("num_perm", [16, 64, 128, 256])
def test_the_lsh_band_layout_is_datasketchs(num_perm: int) -> None:
    for threshold in [round(0.05 * k, 2) for k in range(1, 20)] + [0.33, 0.66, 0.85]:
        try:
            lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=LSH_WEIGHTS)
            expected: tuple[int, int] | str = (lsh.b, lsh.r)
        except ValueError:
            expected = "refused"
        try:
            found: tuple[int, int] | str = lsh_bands.__wrapped__(threshold, num_perm)
        except ValueError as refused:
            assert "fewer than 2 bands" in str(refused)
            found = "refused"
        assert found == expected, f"threshold {threshold}, {num_perm} permutations"
    assert lsh_bands(NEAR_DUPLICATE_JACCARD, NUM_PERM) == (39, 3), "the layout the constants' docstring names"


def test_the_audit_imports_neither_datasketch_nor_scipy() -> None:
    """datasketch's package imports its LSH module, and that SciPy's integrate: 0.4 s before any audit."""
    probe = (
        "import sys\n"
        "from curation.audit.text import near_duplicate_pairs, shingles, words\n"
        "sets = [shingles(words(t)) for t in ('the old man said the kettle was boiling', 'the old man said the "
        "kettle was burning')]\n"
        "assert [(i, j) for i, j, _ in near_duplicate_pairs(sets)] == [(0, 1)]\n"
        "print(sorted(m for m in ('datasketch', 'scipy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.8])
def test_the_prescreen_loses_a_pair_at_the_threshold_with_probability_below_its_bound(threshold: float) -> None:
    from math import comb

    from curation.audit.text import PRESCREEN_LOSS, PRESCREEN_PERMS, _prescreen_minimum

    def below(k: int) -> float:  # P(Binomial(PRESCREEN_PERMS, threshold) < k)
        n = PRESCREEN_PERMS
        return sum(comb(n, i) * threshold**i * (1 - threshold) ** (n - i) for i in range(k))

    needed = _prescreen_minimum(threshold)
    assert below(needed) <= PRESCREEN_LOSS < below(needed + 1)
    assert needed < threshold * PRESCREEN_PERMS
