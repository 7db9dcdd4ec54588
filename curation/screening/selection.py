"""Selection (§4.1): each book's best-scoring transition, then the top N overall, with deterministic ties."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Scored:
    id: str
    book: str
    mean: float
    transition: int
    """Transition coherence breaks ties first: the benchmark is about what comes next."""

    @property
    def rank_key(self) -> tuple[float, int, str]:
        return (-self.mean, -self.transition, self.id)


def select_best(candidates: Iterable[Scored], top: int, per_book: int = 1) -> dict[str, str]:
    """Candidate id -> ``""`` when selected, else the reason code it was not.

    Within a book the best ``per_book`` by mean score, then transition coherence, then id; across books
    the best ``top`` by the same key. The same input always selects the same ids in any input order.
    """
    by_book: dict[str, list[Scored]] = {}
    for c in candidates:
        by_book.setdefault(c.book, []).append(c)
    outcome: dict[str, str] = {}
    finalists: list[Scored] = []
    for members in by_book.values():
        members.sort(key=lambda c: c.rank_key)
        finalists.extend(members[:per_book])
        for c in members[per_book:]:
            outcome[c.id] = "select:not_best_in_book"
    finalists.sort(key=lambda c: c.rank_key)
    for c in finalists[:top]:
        outcome[c.id] = ""
    for c in finalists[top:]:
        outcome[c.id] = "select:below_top_n"
    return outcome
