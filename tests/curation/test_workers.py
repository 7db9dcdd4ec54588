"""The worker pool of large imports: a worker that dies does not lose or change any result."""

from __future__ import annotations

import operator
import os
import signal
import time

import pytest

from curation import workers


def test_a_worker_that_ends_abruptly_leaves_its_inputs_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "MIN_PARALLEL", 4)
    monkeypatch.setattr(workers, "CHUNK", 2)
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    tasks = [0.3] * 8  # fn(context, task) = context(task) = time.sleep(0.3): long enough to kill a worker mid-way
    with workers.Runner(operator.call, time.sleep) as runner:
        for task in tasks:
            runner.add(task)
        assert runner.pool is not None
        deadline = time.monotonic() + 30
        while not runner.pool._processes and time.monotonic() < deadline:  # the pool starts its workers lazily
            time.sleep(0.05)
        victim = next(iter(runner.pool._processes))
        os.kill(victim, signal.SIGKILL)
        results = runner.results()
    assert results == [None] * len(tasks)  # every input's result, in order, none lost


def test_results_come_back_in_input_order_from_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "MIN_PARALLEL", 4)
    monkeypatch.setattr(workers, "CHUNK", 3)
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    tasks = list(range(20))
    pooled = workers.run_all(operator.call, abs, [-t for t in tasks])
    assert pooled == tasks
