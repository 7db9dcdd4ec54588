"""Text duplicates on contexts: normalization, exact keys, MinHash-LSH near duplicates."""

from __future__ import annotations

from curation.audit.text import jaccard, near_duplicate_pairs, normalize_text, shingles, text_key, words


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
