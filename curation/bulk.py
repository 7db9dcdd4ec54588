"""Bulk work in one process: loading a workspace, importing a file."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Bulk work creates many small objects and few cycles; the cyclic collector would rescan the growing heap
    again and again (a status derivation's time grew 25x for 10x items; an import's database step spent a third
    of its time there), so it pauses meanwhile. What the work leaves in cycles is collected once it resumes."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
