"""One gate policy for admission and release (``[gates]``), and a release build that writes no gate rows."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from curation.kinds import GateFinding
from curation.tables import GateResult, Item
from curation.workflow import derive_status
from curation.workspace import Workspace
from exports.build import build_release
from exports.gates import Gates, default_gates


def gate_rows(ws: Workspace) -> list[tuple[str, str, list[str], str]]:
    with ws.session() as s:
        rows = s.scalars(select(GateResult).order_by(GateResult.item_id, GateResult.gate))
        return [(g.item_id, g.gate, list(g.reasons), str(g.updated_at)) for g in rows]


def test_a_release_build_reads_gates_and_writes_no_gate_rows(admitted_ws: Workspace, tmp_path: Path) -> None:
    before = gate_rows(admitted_ws)
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")  # re-runs media checks and audits on its candidates
    assert gate_rows(admitted_ws) == before


def test_the_configured_mode_decides_blocking_at_admission_and_at_release(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    with admitted_ws.writing() as s:
        item = s.get(Item, "g1-a")
        s.add(GateResult(item_id="g1-a", gate="audit", content_hash=item.content_hash, reasons=["duplicate:c1"]))
    held = {st.id: (st.state, st.reasons) for st in derive_status(admitted_ws)}
    assert held["g1-a"] == ("held", ["duplicate:c1"])

    admitted_ws.settings.gates.audit = "warn"
    warned = {st.id: (st.state, st.reasons) for st in derive_status(admitted_ws)}
    assert warned["g1-a"] == ("admitted", ["duplicate:c1"]) and warned["g1-b"] == ("admitted", [])
    admitted_ws.settings.gates.audit = "off"
    assert {st.id: st.reasons for st in derive_status(admitted_ws)}["g1-a"] == []

    def loud(ws: Workspace, ids: list[str]) -> dict[str, GateFinding]:
        return {"g2-a": GateFinding(("media:loudness",), {"lufs": -9.0})}

    gates = Gates(item=(*default_gates().item, ("media_loudness", loud)))
    admitted_ws.settings.gates.media = "warn"  # a media gate that only warns keeps nothing out
    result = build_release(admitted_ws, "1.0.0", out=tmp_path / "r", gates=gates)
    ids = [json.loads(x)["id"] for x in (tmp_path / "r" / "data" / "items.jsonl").read_text().splitlines()]
    assert ids == ["g1-a", "g1-b", "g2-a", "g2-b"] and not result.dropped
    admitted_ws.settings.gates.media = "block"
    partial = build_release(admitted_ws, "1.0.1", out=tmp_path / "p", gates=gates, allow_partial=True)
    assert partial.dropped == {"g2-a": ["media:loudness"], "g2-b": ["group:sister_pending"]}
