"""A release build derives the workspace once: its gates, reports and snapshot read the state it pinned."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import curation.agreement.review_agreement
from curation.workflow import Derivation
from curation.workspace import Workspace
from exports.build import build_release
from exports.build_state import derived, once_per_build, pinned, reviewed_items
from exports.gates import Gates, default_gates, public_agreement


def test_a_build_derives_once_and_loads_the_reviewed_items_once(
    admitted_ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"derive_all": 0, "reviewed": 0}
    derive_all, load = Derivation.derive_all, curation.agreement.review_agreement.load_reviewed_items

    def counting_derive(self: Derivation) -> list:  # type: ignore[type-arg]
        calls["derive_all"] += 1
        return derive_all(self)

    def counting_load(ws, state=None):  # type: ignore[no-untyped-def]
        calls["reviewed"] += 1
        return load(ws, state)

    monkeypatch.setattr(Derivation, "derive_all", counting_derive)
    monkeypatch.setattr(curation.agreement.review_agreement, "load_reviewed_items", counting_load)
    result = build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    assert result.items == 4
    assert calls == {"derive_all": 1, "reviewed": 1}


def test_outside_a_build_each_reader_loads_its_own(admitted_ws: Workspace) -> None:
    first, second = derived(admitted_ws), derived(admitted_ws)
    assert first is not second
    with pinned(admitted_ws, first):
        assert derived(admitted_ws) is first
        assert [i.id for i in reviewed_items(admitted_ws)] == [i.id for i in reviewed_items(admitted_ws)]
    assert derived(admitted_ws) is not first


def _published_agreement(release: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((release / "stats.json").read_text())["agreement"]


def _fresh_agreement(ws: Workspace, released: set[str]) -> dict:  # type: ignore[type-arg]
    """The figures computed outside any build, over the released items: what a build must publish."""
    items = [i for i in curation.agreement.review_agreement.load_reviewed_items(ws) if i.id in released]
    report = curation.agreement.review_agreement.workspace_agreement_report(ws, items)
    return json.loads(json.dumps(public_agreement(report)))


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The item ids of every computation of the gated agreement statistics, in order."""
    calls: list[list[str]] = []
    real = curation.agreement.review_agreement.gated_statistics

    def counting(items):  # type: ignore[no-untyped-def]
        calls.append([i.id for i in items])
        return real(items)

    monkeypatch.setattr(curation.agreement.review_agreement, "gated_statistics", counting)
    return calls


def test_the_agreement_gate_and_figures_share_one_computation_when_every_reviewed_item_ships(
    admitted_ws: Workspace, tmp_path: Path, computed: list[list[str]]
) -> None:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    assert computed == [["g1-a", "g1-b", "g2-a", "g2-b"]]
    assert _published_agreement(tmp_path / "r") == _fresh_agreement(admitted_ws, {"g1-a", "g1-b", "g2-a", "g2-b"})


def test_a_partial_release_publishes_the_figures_of_its_own_items(
    admitted_ws: Workspace, tmp_path: Path, computed: list[list[str]]
) -> None:
    def loudness(ws: Workspace, ids: list[str]) -> dict[str, list[str]]:
        return {"g2-a": ["media:loudness"]} if "g2-a" in ids else {}

    defaults = default_gates()
    gates = Gates((*defaults.item, ("fake_media", loudness)), defaults.workspace, defaults.reports, defaults.imports)
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r", gates=gates, allow_partial=True)
    # the gate judges every reviewed item; the figures are those of the two released ones, computed apart
    assert sorted(computed) == [["g1-a", "g1-b"], ["g1-a", "g1-b", "g2-a", "g2-b"]]
    published = _published_agreement(tmp_path / "r")
    assert published["items"] == 2
    assert published == _fresh_agreement(admitted_ws, {"g1-a", "g1-b"})


def test_a_thread_computing_one_thing_does_not_hold_up_another_asking_for_something_else(
    admitted_ws: Workspace,
) -> None:
    started, other_done = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        assert other_done.wait(10), "the other thread's once_per_build waited for this one"
        return "slow"

    with pinned(admitted_ws, derived(admitted_ws)), ThreadPoolExecutor(1) as pool:
        first = pool.submit(once_per_build, admitted_ws, "slow", slow)
        assert started.wait(10)
        assert once_per_build(admitted_ws, "quick", lambda: "quick") == "quick"
        other_done.set()
        assert first.result() == "slow"
        # asked again, either is not computed again
        assert once_per_build(admitted_ws, "slow", lambda: "again") == "slow"
