"""Normalize and audit inside a workspace: derivatives beside originals, gates that hold and release items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from curation.audit.normalize import normalize_workspace
from curation.audit.tables import SIGNATURE_VERSION, MediaSignature
from curation.audit.workspace import _cached_signatures, audit_workspace, resolve
from curation.config import Settings
from curation.errors import NotFoundError, PermissionDenied, ValidationFailed
from curation.items import import_items
from curation.tables import Asset, Event, GateResult, Item, ItemRevision
from curation.workflow import derive_status
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.media_factory import item_row, write_items
from tests.synthetic_media import scene

runner = CliRunner()


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    workspace.add_person("ann1", ["author"])
    workspace.add_person("maya", ["maintainer"])
    rows = [
        item_row("a1", "g1", image="media/one.jpg"),
        item_row("a2", "g1", image="media/one.jpg"),
        item_row("b1", "g2", image="media/two.png", context="I am so grateful for everything you did today."),
    ]
    (tmp_path / "in" / "media").mkdir(parents=True)
    scene(1, (640, 480)).save(tmp_path / "in" / "media" / "one.jpg", quality=75)  # distinct pictures (flat
    scene(2, (1400, 900)).save(tmp_path / "in" / "media" / "two.png")  # colour fields share a perceptual hash)
    import_items(workspace, write_items(tmp_path / "in", rows))
    return workspace


def states(ws: Workspace) -> dict[str, tuple[str, list[str]]]:
    return {st.id: (st.state, st.reasons) for st in derive_status(ws)}


def test_normalize_adds_derivatives_keeps_originals_and_is_idempotent(ws: Workspace) -> None:
    with ws.session() as s:
        before = {i.id: (i.image, i.audio, i.content_hash, i.revision) for i in s.scalars(select(Item))}
        originals = set(s.scalars(select(Asset.sha256)))
        revisions = len(s.scalars(select(ItemRevision)).all())
    checked = normalize_workspace(ws, check_only=True)
    assert checked.summary()["created"] == 0 and len(checked.nonconforming) == len(originals)
    assert {"media:sample_rate", "media:loudness"} <= {r for a in checked.assets for r in a.reasons}

    first = normalize_workspace(ws)
    assert first.summary() == {"assets": len(originals), "created": len(originals), "nonconforming": 0}
    with ws.session() as s:
        derived = list(s.scalars(select(Asset).where(Asset.derived_from.is_not(None))))
        assert {a.derived_from for a in derived} == originals
        assert {a.transform["transform"] for a in derived} == {"image_normalize", "audio_normalize"}
        assert all(ws.asset_path(a).is_file() for a in derived)
        assert all(ws.asset_path(s.get(Asset, sha)).is_file() for sha in originals)
        after = {i.id: (i.image, i.audio, i.content_hash, i.revision) for i in s.scalars(select(Item))}
        assert after == before  # a derivative is not a revision
        assert len(s.scalars(select(ItemRevision)).all()) == revisions
        events = len(s.scalars(select(Event).where(Event.action == "media.normalized")).all())
        assets = len(s.scalars(select(Asset)).all())

    second = normalize_workspace(ws)
    assert second.summary()["created"] == 0
    assert [a.normalized for a in second.assets] == [a.normalized for a in first.assets]
    with ws.session() as s:
        assert len(s.scalars(select(Asset)).all()) == assets
        assert len(s.scalars(select(Event).where(Event.action == "media.normalized")).all()) == events
        gates = {g.item_id: g for g in s.scalars(select(GateResult).where(GateResult.gate == "media"))}
    assert all(g.reasons == [] and not g.blocking for g in gates.values())


def test_unrepairable_media_stays_blocked(ws: Workspace, tmp_path: Path) -> None:
    import numpy as np
    import soundfile as sf

    quiet = tmp_path / "in2" / "media" / "silent.wav"
    quiet.parent.mkdir(parents=True)
    sf.write(quiet, np.zeros(16000), 16000, subtype="PCM_16")
    import_items(ws, write_items(tmp_path / "in2", [item_row("c1", "g3", audio="media/silent.wav")]))
    report = normalize_workspace(ws)
    silent = next(a for a in report.assets if a.name == "silent.wav")
    assert silent.normalized is None and "media:silence" in silent.reasons
    with ws.session() as s:
        gate = s.get(GateResult, ("c1", "media"))
    assert gate is not None and gate.blocking and "media:silence" in gate.reasons


def test_audit_stores_leaks_and_duplicates_per_item(ws: Workspace) -> None:
    ws.settings.gates.option_in_context = "block"  # warns by default (see below); the setting makes it hold
    report = audit_workspace(ws)
    assert report.clusters == []  # a1 and a2 are sisters sharing one picture
    assert [(leak.kind, leak.items) for leak in report.leaks if leak.blocking] == [("option_in_context", ["b1"])]
    with ws.session() as s:
        gate = s.get(GateResult, ("b1", "audit"))
    assert gate is not None and gate.reasons == ["leak:option_in_context"] and gate.blocking
    leak = next(leak for leak in report.leaks if leak.kind == "option_in_context")
    with pytest.raises(PermissionDenied):
        resolve(ws, leak.id, "ann1", distinct=True, reason="mine")
    resolve(ws, leak.id, "maya", distinct=True, reason="the context says it, and that is the point")
    with ws.session() as s:
        gate = s.get(GateResult, ("b1", "audit"))
    assert gate is not None and gate.reasons == [] and not gate.blocking
    audit_workspace(ws)  # a rerun keeps the decision
    with ws.session() as s:
        assert s.get(GateResult, ("b1", "audit")).reasons == []  # type: ignore[union-attr]


def test_demo_gates_block_and_resolve(demo_workspace: Workspace) -> None:
    ws = demo_workspace
    assert states(ws)["kitchen-01-a"] == ("admitted", [])
    report = audit_workspace(ws)
    cluster = next(c for c in report.clusters if "kitchen-01-a" in c.items)
    assert {e.modality for e in cluster.edges} == {"image"}

    resolve(ws, cluster.id, "maya", keep="stress-01-a", reason="one drawing is enough")
    held = states(ws)
    assert held["kitchen-01-a"] == ("held", [f"duplicate:{cluster.id}"])
    assert held["kitchen-01-b"] == ("held", [f"duplicate:{cluster.id}", "probe:reducible"])  # + the probe warning
    history = json.loads(invoke("-w", str(ws.root), "history", "kitchen-01-a", "--json").stdout)
    assert [e["after"]["keep"] for e in history if e["action"] == "audit.resolved"][-1] == "stress-01-a"

    resolve(ws, cluster.id, "maya", distinct=True, reason="the smile is the evidence")
    assert states(ws)["kitchen-01-a"] == ("admitted", [])

    with pytest.raises(PermissionDenied):
        resolve(ws, cluster.id, "rev1", distinct=True, reason="x")
    with pytest.raises(NotFoundError, match="curate audit"):
        resolve(ws, "dup-0000000000", "maya", distinct=True, reason="x")
    with pytest.raises(ValidationFailed, match="not in"):
        resolve(ws, cluster.id, "maya", keep="door-01-a")
    with pytest.raises(ValidationFailed, match="reason"):
        resolve(ws, cluster.id, "maya", distinct=True)


def test_media_gate_follows_the_settings(demo_workspace: Workspace) -> None:
    root = demo_workspace.root
    settings = Settings.load(root / "curate.toml")
    settings.media.audio_lufs = -16.0
    settings.save(root / "curate.toml")
    ws = Workspace.open(root)
    checked = normalize_workspace(ws, check_only=True)
    assert checked.nonconforming  # derivatives made for -23 LUFS are stale now
    state, reasons = states(ws)["kitchen-01-a"]
    assert state == "held" and "media:loudness" in reasons
    normalize_workspace(ws)
    assert states(ws)["kitchen-01-a"] == ("admitted", [])
    ws.close()


def test_cli_commands(demo_workspace: Workspace) -> None:
    root = str(demo_workspace.root)
    check = invoke("-w", root, "media", "normalize", "--check", "--json")
    assert check.exit_code == 0 and json.loads(check.stdout)["summary"]["nonconforming"] == 0
    audit = invoke("-w", root, "audit", "--json")
    document = json.loads(audit.stdout)
    assert audit.exit_code == 0 and set(document) == {"clusters", "leaks", "identical_sisters"}
    assert set(document["clusters"][0]) == {"id", "items", "edges"}
    assert all({"kind", "items", "evidence"} <= set(leak) for leak in document["leaks"])
    text = invoke("-w", root, "audit")
    assert "resolved: distinct" in text.stdout
    bad = invoke("-w", root, "audit", "resolve", "dup-0000000000", "--by", "maya", "--distinct", "--reason", "x")
    assert bad.exit_code == 2 and "no cluster or leak" in bad.stderr
    cluster = document["clusters"][0]["id"]
    keep = invoke("-w", root, "audit", "resolve", cluster, "--by", "maya", "--keep", "stress-01-a")
    assert keep.exit_code == 0
    status = {r["id"]: r for r in json.loads(invoke("-w", root, "status", "--json").stdout)}
    assert status["kitchen-01-a"]["state"] == "held"


def test_discarding_duplicates_does_not_reopen_a_decided_cluster(demo_workspace: Workspace) -> None:
    from curation.decisions import decide

    ws = demo_workspace
    cluster = next(c for c in audit_workspace(ws).clusters if "kitchen-01-a" in c.items)
    resolve(ws, cluster.id, "maya", keep="stress-01-a", reason="one drawing is enough")
    decide(ws, "kitchen-01-b", "maya", "discard", "duplicate picture")
    smaller = next(c for c in audit_workspace(ws).clusters if "kitchen-01-a" in c.items)
    assert smaller.id != cluster.id and "kitchen-01-b" not in smaller.items
    with ws.session() as s:
        gates = {g.item_id: g.reasons for g in s.scalars(select(GateResult).where(GateResult.gate == "audit"))}
    assert gates["kitchen-01-a"] == [f"duplicate:{smaller.id}"]  # still a duplicate of the kept one
    assert gates["stress-01-a"] == gates["stress-01-b"] == gates["stress-01-c"] == []  # the kept one's sisters
    assert states(ws)["kitchen-01-b"][0] == "discarded"


def test_option_in_context_warns_by_default(ws: Workspace) -> None:
    report = audit_workspace(ws)
    leak = next(leak for leak in report.leaks if leak.kind == "option_in_context")
    assert leak.items == ["b1"] and not leak.blocking and leak.evidence["severity"] == "warning"
    with ws.session() as s:
        gate = s.get(GateResult, ("b1", "audit"))
    assert gate is not None and gate.reasons == [] and not gate.blocking


def test_stored_signatures_are_read_as_the_orm_reads_them(ws: Workspace) -> None:
    audit_workspace(ws)  # stores every medium's signature
    odd = "f" * 64
    with ws.writing() as s:  # an integer orjson would read as a float, and text in Chinese
        data = {"phash": 12345678901234567890123, "note": "同一张图片", "bands": [1, 2**40]}
        s.add(MediaSignature(sha256=odd, kind="image", version=SIGNATURE_VERSION, data=data))
    with ws.session() as s:
        orm = {m.sha256: (m.kind, m.data) for m in s.execute(select(MediaSignature)).scalars()}
    assert odd in orm and len(orm) > 2  # the odd one and the media the audit signed
    read = _cached_signatures(ws, set(orm) | {"0" * 64})
    assert read == orm
    assert type(read[odd][1]["phash"]) is int
    assert _cached_signatures(ws, {odd}) == {odd: orm[odd]}  # only the wanted ones
