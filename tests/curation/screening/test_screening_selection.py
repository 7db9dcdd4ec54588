"""Selection: each book's best, then the top N, with deterministic ties in any input order."""

from __future__ import annotations

import random

from curation.screening.selection import Scored, select_best


def test_best_per_book_then_top_n() -> None:
    found = select_best(
        [
            Scored("a1", "A", 8.0, 7),
            Scored("a2", "A", 9.0, 7),
            Scored("b1", "B", 7.5, 9),
            Scored("c1", "C", 6.0, 9),
        ],
        top=2,
    )
    assert found == {
        "a2": "",
        "a1": "select:not_best_in_book",
        "b1": "",
        "c1": "select:below_top_n",
    }


def test_ties_break_on_transition_coherence_then_id_whatever_the_order() -> None:
    pool = [Scored(f"x{i:02d}", f"book{i % 5}", 7.0, i % 3) for i in range(30)]
    expected = select_best(pool, top=3)
    for seed in range(5):
        shuffled = pool[:]
        random.Random(seed).shuffle(shuffled)
        assert select_best(shuffled, top=3) == expected
    chosen = sorted(k for k, v in expected.items() if not v)
    # each book's best has transition coherence 2 where it has one; among equals the smaller id wins
    assert chosen == ["x02", "x05", "x08"]


def test_per_book_two_keeps_two_finalists_per_book() -> None:
    pool = [Scored(f"{b}{i}", b, float(i), 5) for b in "AB" for i in range(4)]
    found = select_best(pool, top=10, per_book=2)
    assert sorted(k for k, v in found.items() if not v) == ["A2", "A3", "B2", "B3"]
