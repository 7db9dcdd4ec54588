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


def _in_worker(context: object, task: int) -> tuple[bool, int]:
    return workers.in_worker(), task


def test_clean_workers_do_not_run_the_parent_s_main_script_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    """A process with threads (the UI; a test session after a Streamlit page ran) starts its workers clean; its
    ``__main__`` may be a Streamlit page, which would die in a worker. Found in the CI session: every pooled
    import there ran in one process after its workers died."""
    import sys
    import threading
    import types

    page = tmp_path / "page.py"
    page.write_text("raise SystemExit('the page ran in a worker')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setattr(workers, "MIN_PARALLEL", 4)
    monkeypatch.setattr(workers, "CHUNK", 2)
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # as a UI server's threads
    other.start()
    try:
        with workers.Runner(_in_worker, "context") as runner:
            for task in range(8):
                runner.add(task)
            results = runner.results()
            assert not runner.forking
    finally:
        stop.set()
        other.join()
    assert results == [(True, t) for t in range(8)]  # every input ran in a worker, in order
    assert "ended abruptly" not in caplog.text
    assert sys.modules["__main__"] is main
