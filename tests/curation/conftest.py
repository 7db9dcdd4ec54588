"""Fixtures shared by the tests of ``curation``."""

from __future__ import annotations

import os
import threading

import pytest

from curation import split_derivation


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The derivation split from the first item (``curation.split_derivation``), noting every child forked.

    The test session keeps threads of its own running (Playwright's driver has asyncio wait for it on a
    thread; a progress bar leaves tqdm's monitor), each blocked in a wait that holds no lock a child could
    need. They count as this process's own: only a thread started during the test keeps the derivation in
    one process. ``test_a_fresh_process_splits_by_the_real_rule`` runs the rule itself, unpatched."""
    present = set(threading.enumerate())
    monkeypatch.setattr(split_derivation, "_single_threaded", lambda: set(threading.enumerate()) <= present)
    monkeypatch.setattr(split_derivation, "SPLIT_FROM", 0)
    made: list[int] = []
    fork = os.fork

    def counted() -> int:
        child = fork()
        if child:
            made.append(child)
        return child

    monkeypatch.setattr(os, "fork", counted)
    return made
