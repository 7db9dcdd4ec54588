"""A release build derives the workspace once: its gates, reports and snapshot read the state it pinned."""

from __future__ import annotations

from pathlib import Path

import pytest

import curation.agreement.review_agreement
from curation.workflow import Derivation
from curation.workspace import Workspace
from exports.build import build_release
from exports.build_state import derived, pinned, reviewed_items


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
