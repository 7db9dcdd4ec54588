"""Fixtures shared by the tests of ``curation``."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from curation import split_derivation


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The derivation split from the first item (``curation.split_derivation``), in a process with one thread,
    noting every child forked.

    A progress bar shown by an earlier test in this process (datasets, mlcroissant) leaves tqdm's monitor
    thread running, and a process with a second thread never forks: the monitor is stopped for the test."""
    if "tqdm" in sys.modules:  # only a process that imported tqdm can have its monitor running
        from tqdm import TMonitor, tqdm

        monkeypatch.setattr(tqdm, "monitor_interval", 0)  # a bar made during the test starts no monitor
        for thread in threading.enumerate():
            if isinstance(thread, TMonitor):  # one per bar class (tqdm.auto's is not tqdm's)
                thread.exit()
    assert threading.active_count() == 1, f"threads left running by earlier tests: {threading.enumerate()}"
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
