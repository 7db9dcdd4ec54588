"""Pausing Python's cyclic garbage collector around bulk, cycle-free work.

Screening 91,449 candidates keeps hundreds of thousands of small objects alive (the candidate rows, the
outcomes) while each step allocates as many again; every collection the allocations trigger walks the live
ones, so a step's time per candidate grew with the corpus (17.6x the time for 9.1x the candidates). Rule
steps, selection and the App. C audits make no reference cycles worth collecting mid-step: with the
collector paused they are linear, and it runs again (collecting anything left) when they end. Model steps
are not paused (a backend may hold accelerator memory in cycles): the rows loaded before the steps are
frozen out of the collections instead.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (reference counting still frees everything acyclic)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def long_lived_frozen() -> Iterator[None]:
    """Objects alive now (the loaded candidates) are left out of every collection inside the block; new
    objects are collected as usual, so a model step's cyclic garbage still goes."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
