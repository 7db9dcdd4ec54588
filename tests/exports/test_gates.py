"""The gate registry: hooks run on the candidates, failures hold sisters, the conformity gate's plumbing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from curation.workspace import Workspace
from exports.build import build_release
from exports.gates import Gates, lazy, media_conformity_gate, run_item_gates, run_reports, run_workspace_gates
from exports.publish import GatesFailed


@dataclass
class FakeCheck:
    reasons: list[str] = field(default_factory=list)


@pytest.fixture
def fake_mediatools(monkeypatch, admitted_ws: Workspace) -> list[str]:  # type: ignore[no-untyped-def]
    """Stands in for the media measurements: images pass, the clip named g2-b.wav is too quiet. The facts the
    import measured are dropped, so that the gate measures (with this stand-in)."""
    from sqlalchemy import delete

    import curation.audit.intake
    import curation.audit.media_facts
    import curation.mediatools.facts
    from curation.audit.tables import MediaFact

    with admitted_ws.writing() as s:
        s.execute(delete(MediaFact))

    seen: list[str] = []

    def measure(kind: str, data: bytes, name: str) -> dict[str, str]:
        seen.append(name)
        assert kind == "image" or data[:4] == b"RIFF"
        return {"name": name}

    def verdict(kind: str, facts: dict[str, str], name: str, settings) -> FakeCheck:  # type: ignore[no-untyped-def]
        assert settings.audio_lufs == -23.0 and facts == {"name": name}
        return FakeCheck(["media:loudness"] if name == "g2-b.wav" else [])

    monkeypatch.setattr(curation.audit.media_facts, "measure", measure)
    monkeypatch.setattr(curation.audit.intake, "measure", measure)  # the batch step (curation.audit.measuring)
    # which measures a clip's facts from the decode its signature reuses (None: the signature decodes it itself)
    monkeypatch.setattr(
        curation.audit.intake, "measure_audio_decoded", lambda data, name: (measure("audio", data, name), None)
    )
    monkeypatch.setattr(curation.mediatools.facts, "verdict", verdict)
    return seen


def test_conformity_gate_checks_each_shipped_file_once(admitted_ws: Workspace, fake_mediatools: list[str]) -> None:
    failures = media_conformity_gate(admitted_ws, ["g1-a", "g1-b", "g2-a", "g2-b"])
    assert failures == {"g2-b": ["media:loudness"]}
    assert sorted(fake_mediatools) == ["g1-a.wav", "g1-b.wav", "g1.jpg", "g2-a.wav", "g2-b.wav", "g2.jpg"]


def test_conformity_gate_refuses_a_build(admitted_ws: Workspace, fake_mediatools: list[str], tmp_path: Path) -> None:
    gates = Gates(item=(("media_conformity", media_conformity_gate),))
    with pytest.raises(GatesFailed) as refused:
        build_release(admitted_ws, "1.0.0", out=tmp_path / "r", gates=gates)
    assert refused.value.items == {"g2-a": ["group:sister_pending"], "g2-b": ["media:loudness"]}


def test_hooks_are_called_with_the_workspace_and_only_the_candidates(admitted_ws: Workspace) -> None:
    calls: list[list[str]] = []

    def record(ws: Workspace, ids: list[str]) -> dict[str, list[str]]:
        calls.append(list(ids))
        return {"g1-a": []}  # an empty reason list is a pass

    groups = {"g1-a": "g1", "g1-b": "g1"}
    assert run_item_gates(admitted_ws, Gates(item=(("record", record),)), ["g1-a", "g1-b"], groups) == {}
    assert calls == [["g1-a", "g1-b"]]
    gates = Gates(
        workspace=(("kappa", lambda ws: ["kappa 0.3 < 0.6"]),), reports=(("agreement", lambda ws, ids: None),)
    )
    assert run_workspace_gates(admitted_ws, gates) == ["kappa: kappa 0.3 < 0.6"]
    assert run_reports(admitted_ws, gates, ["g1-a"]) == {}


def test_lazy_hooks_import_on_first_call() -> None:
    hook = lazy("exports.stats", "random_baselines")
    assert hook([{"group": "g", "options": ["a", "b"]}]) == {"acc_q": 0.5, "acc_g": 0.5}


def test_the_agreement_thresholds_refuse_a_release(admitted_ws: Workspace, tmp_path: Path) -> None:
    import json

    from curation.reviews import import_reviews
    from devsupport.reviews import consistent_sets

    split = consistent_sets("A") | {"text": ["A", "B", "C", "D"]}  # rev3 disagrees on one cell; still well posed
    record = {"item": "g1-a", "stage": "subset_checklist", "reviewer": "rev3", "consistent": split}
    (tmp_path / "split.jsonl").write_text(json.dumps(record) + "\n")
    import_reviews(admitted_ws, tmp_path / "split.jsonl")
    build_release(admitted_ws, "1.0.0", out=tmp_path / "ok")  # default thresholds: alpha still >= 0.667

    admitted_ws.settings.agreement.checklist_alpha_min = 0.99
    with pytest.raises(GatesFailed) as refused:
        build_release(admitted_ws, "1.1.0", out=tmp_path / "r", allow_partial=True)
    assert refused.value.items == {}
    assert len(refused.value.workspace) == 1 and "agreement: subset-checklist alpha" in refused.value.workspace[0]
    assert "below the minimum 0.990" in str(refused.value) and not (tmp_path / "r").exists()


def test_agreement_figures_reach_stats_and_croissant(admitted_ws: Workspace, tmp_path: Path) -> None:
    import json

    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    agreement = json.loads((tmp_path / "r" / "stats.json").read_text())["agreement"]
    assert agreement["items"] == 4 and agreement["answer_check"]["overall"]["value"] == 1.0
    assert "pairs" not in agreement["answer_check"]  # no per-person figures in a public release
    analysis = json.loads((tmp_path / "r" / "croissant.json").read_text())["rai:dataAnnotationAnalysis"]
    assert "Blind answer check vs the author's label, Cohen's kappa: 1.000 (4 units, 2 coders)" in analysis
