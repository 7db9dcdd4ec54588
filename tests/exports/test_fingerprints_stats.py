"""Fingerprints (normalized-text SHA-256, 8-gram MinHash) and the random baselines of TRIAD App. E.7."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from curation.workspace import Workspace
from exports.build import build_release
from exports.fingerprints import minhash_hex, normalize_text, shingles, sketch_similarity, text_sha256
from exports.stats import random_baselines, release_stats

LONG = (
    "Sure, that was a really helpful suggestion about the kitchen, and I will certainly try it the next time "
    "my brother comes over for dinner with his new friends from the office downtown."
)


def test_normalization_folds_unicode_case_and_whitespace() -> None:
    assert normalize_text("  Ｓｕｒｅ,\tTHAT\u00a0was\n\nfine ") == "sure, that was fine"
    assert text_sha256("Sure,  THAT was fine") == hashlib.sha256(b"sure, that was fine").hexdigest()


def test_shingles_are_word_8_grams() -> None:
    words = normalize_text(LONG).split()
    grams = shingles(LONG)
    assert len(grams) == len(words) - 7 and " ".join(words[:8]) in grams
    assert shingles("too short") == {"too short"}


def test_minhash_is_deterministic_and_estimates_jaccard() -> None:
    sketch = minhash_hex(LONG)
    assert sketch == minhash_hex(LONG) and len(sketch) == 1024
    assert sketch_similarity(sketch, minhash_hex(LONG.upper())) == 1.0
    edited = LONG.replace("dinner", "lunch")
    a, b = shingles(LONG), shingles(edited)
    jaccard = len(a & b) / len(a | b)
    assert abs(sketch_similarity(sketch, minhash_hex(edited)) - jaccard) < 0.15
    assert (
        sketch_similarity(sketch, minhash_hex("An entirely different sentence about trains and weather today.")) < 0.1
    )


def test_random_baselines_match_a_hand_computation() -> None:
    items = [
        {"group": "g1", "options": ["a"] * 4},
        {"group": "g1", "options": ["a"] * 4},
        {"group": "g1", "options": ["a"] * 3},
        {"group": "g2", "options": ["a"] * 2},
        {"group": "g2", "options": ["a"] * 5},
    ]
    acc_q = (1 / 4 + 1 / 4 + 1 / 3 + 1 / 2 + 1 / 5) / 5
    acc_g = ((1 / 4) * (1 / 4) * (1 / 3) + (1 / 2) * (1 / 5)) / 2
    assert random_baselines(items) == {"acc_q": round(acc_q, 6), "acc_g": round(acc_g, 6)}


def test_random_baselines_on_triad_group_sizes() -> None:
    """TRIAD H.2: 86 groups of sizes 2/3/4/8 with counts 23/11/42/10 (327 queries); four options each."""
    items = []
    for size, count in ((2, 23), (3, 11), (4, 42), (8, 10)):
        for g in range(count):
            items += [{"group": f"s{size}-{g}", "options": ["a"] * 4}] * size
    assert len(items) == 327
    baselines = random_baselines(items)
    assert baselines["acc_q"] == 0.25
    # (23/4^2 + 11/4^3 + 42/4^4 + 10/4^8) / 86 = 0.020624...; the paper's 2.2% uses its real option counts
    assert baselines["acc_g"] == pytest.approx((23 / 16 + 11 / 64 + 42 / 256 + 10 / 65536) / 86, abs=1e-6)


def test_random_baselines_need_items() -> None:
    with pytest.raises(ValueError, match="undefined"):
        random_baselines([])


def test_stats_json_of_a_release(admitted_ws: Workspace, tmp_path: Path) -> None:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    stats = json.loads((tmp_path / "r" / "stats.json").read_text())
    assert stats["items"] == 4 and stats["groups"] == 2
    assert stats["by_language"] == {"en": 2, "zh": 2}
    assert stats["by_option_count"] == {"3": 2, "4": 2} and stats["by_group_size"] == {"2": 2}
    assert stats["by_taxonomy_leaf"]["audio"] == {"prosodic": 4} and stats["by_tier"] == {"2": 4}
    assert stats["random_baseline"] == {
        "acc_q": round((1 / 4 + 1 / 4 + 1 / 3 + 1 / 3) / 4, 6),
        "acc_g": round((1 / 16 + 1 / 9) / 2, 6),
    }
    assert stats == release_stats(
        [json.loads(x) for x in (tmp_path / "r" / "data" / "items.jsonl").read_text().splitlines()], stats["agreement"]
    )


def test_minhash_follows_its_documented_recipe() -> None:
    """Recompute the sketch from the docstring's recipe with plain integers (no numpy)."""
    recipe = []
    xs = [int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest()[:4], "little") for s in shingles(LONG)]
    for i in range(128):
        digest = hashlib.blake2b(f"omnicurate-minhash-{i}".encode(), digest_size=8).digest()
        a, b = int.from_bytes(digest[:4], "little") | 1, int.from_bytes(digest[4:], "little")
        recipe.append(min(((a * x + b) % (2**61 - 1)) % 2**32 for x in xs))
    assert minhash_hex(LONG) == b"".join(v.to_bytes(4, "big") for v in recipe).hex()
