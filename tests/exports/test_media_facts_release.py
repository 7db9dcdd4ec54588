"""Release builds read stored media facts: measured at import (or once per content hash on first need, for a
workspace older than that), measured again only for a new version of the measuring function, never trusted over
the store's own hash, and without effect on the bytes of a release."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import delete, select

import curation.audit.audio
import curation.audit.intake
import curation.audit.media_facts
import curation.mediatools.audio
import curation.mediatools.facts
from curation.audit.tables import MediaFact, MediaSignature
from curation.tables import Asset
from curation.workspace import Workspace
from exports.build import build_release
from exports.gates import media_conformity_gate

ITEMS = ["g1-a", "g1-b", "g2-a", "g2-b"]


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Counts measurements (by kind) and audio decodes anywhere in the build (the audit's signatures too)."""
    calls: dict[str, list[str]] = {"measure": [], "decode": []}
    measure, decode = curation.audit.media_facts.measure, curation.mediatools.audio.decode_audio
    measure_decoded = curation.audit.intake.measure_audio_decoded

    def counting_measure(kind: str, data: bytes, name: str) -> dict[str, object]:
        calls["measure"].append(kind)
        return measure(kind, data, name)

    def counting_measure_decoded(data: bytes, name: str):  # type: ignore[no-untyped-def]
        calls["measure"].append("audio")
        return measure_decoded(data, name)

    def counting_decode(data: bytes, name: str, settings):  # type: ignore[no-untyped-def]
        calls["decode"].append(name)
        return decode(data, name, settings)

    monkeypatch.setattr(curation.audit.media_facts, "measure", counting_measure)
    monkeypatch.setattr(curation.audit.intake, "measure", counting_measure)  # the batch step (audit.measuring)
    monkeypatch.setattr(curation.audit.intake, "measure_audio_decoded", counting_measure_decoded)  # its clips
    monkeypatch.setattr(curation.mediatools.audio, "decode_audio", counting_decode)
    monkeypatch.setattr(curation.mediatools.facts, "decode_audio", counting_decode)
    return calls


@pytest.fixture
def unmeasured_ws(admitted_ws: Workspace) -> Workspace:
    """The admitted workspace as one made before imports stored facts and signatures: none are stored."""
    with admitted_ws.writing() as s:
        s.execute(delete(MediaFact))
        s.execute(delete(MediaSignature))
    return admitted_ws


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_import_stored_every_medium_s_facts_and_signature_so_the_first_build_decodes_nothing(
    admitted_ws: Workspace, measured: dict[str, list[str]], tmp_path: Path
) -> None:
    with admitted_ws.session() as s:
        assets = list(s.execute(select(Asset)).scalars())
        facts = {row.sha256: row for row in s.execute(select(MediaFact)).scalars()}
        signed = {row.sha256 for row in s.execute(select(MediaSignature)).scalars()}
    assert sorted(a.kind for a in assets) == ["audio"] * 4 + ["image"] * 2
    assert set(facts) == signed == {a.sha256 for a in assets}
    for asset in assets:  # what the gate would have measured from the store file
        data = admitted_ws.asset_path(asset).read_bytes()
        assert facts[asset.sha256].data == curation.mediatools.facts.measure(asset.kind, data, "x")
        assert facts[asset.sha256].version == curation.mediatools.facts.FACTS_VERSIONS[asset.kind]
    measured["decode"].clear()  # the check above decoded; the import before the counting did too
    first = build_release(admitted_ws, "1.0.0", out=tmp_path / "first")
    assert measured == {"measure": [], "decode": []}
    assert first.items == 4


def test_facts_are_measured_once_and_a_rebuild_decodes_nothing(
    unmeasured_ws: Workspace, measured: dict[str, list[str]], tmp_path: Path
) -> None:
    admitted_ws = unmeasured_ws
    first = build_release(admitted_ws, "1.0.0", out=tmp_path / "first")
    assert sorted(measured["measure"]) == ["audio"] * 4 + ["image"] * 2  # four clips, one image per group
    assert measured["decode"]  # the first build decoded (facts and the audit's signatures)
    with admitted_ws.session() as s:
        assert len(list(s.execute(select(MediaFact)).scalars())) == 6
    measured["measure"].clear()
    measured["decode"].clear()
    again = build_release(admitted_ws, "1.0.1", out=tmp_path / "again")
    assert measured == {"measure": [], "decode": []}
    assert again.items == first.items == 4


def test_a_new_version_of_a_measuring_function_measures_again_and_nothing_else(
    unmeasured_ws: Workspace, measured: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    admitted_ws = unmeasured_ws
    assert media_conformity_gate(admitted_ws, ITEMS) == {}
    assert len(measured["measure"]) == 6
    measured["measure"].clear()
    monkeypatch.setitem(curation.mediatools.facts.FACTS_VERSIONS, "audio", 99)
    assert media_conformity_gate(admitted_ws, ITEMS) == {}
    assert measured["measure"] == ["audio"] * 4  # the images' facts stay
    with admitted_ws.session() as s:
        versions = {(row.kind, row.version) for row in s.execute(select(MediaFact)).scalars()}
    assert versions == {("audio", 99), ("image", curation.mediatools.facts.IMAGE_FACTS_VERSION)}
    measured["measure"].clear()
    assert media_conformity_gate(admitted_ws, ITEMS) == {}
    assert measured["measure"] == []


def test_the_verdict_follows_the_settings_without_measuring_again(
    admitted_ws: Workspace, measured: dict[str, list[str]]
) -> None:
    assert media_conformity_gate(admitted_ws, ITEMS) == {}
    measured["measure"].clear()
    admitted_ws.settings.media.audio_lufs = -16.0  # the clips were normalized to -23 LUFS
    assert media_conformity_gate(admitted_ws, ITEMS) == {item: ["media:loudness"] for item in ITEMS}
    assert measured["measure"] == []


def test_a_store_file_corrupted_after_its_facts_were_stored_is_still_refused(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    assert media_conformity_gate(admitted_ws, ITEMS) == {}  # facts stored from the intact files
    with admitted_ws.session() as s:
        asset = s.get(Asset, admitted_ws.item("g1-b").audio)
    path = admitted_ws.asset_path(asset)
    path.write_bytes(path.read_bytes()[:-1] + b"\x00")  # same size: the store gate's size check passes
    with pytest.raises(Exception, match="store is corrupt"):
        build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_facts_of_a_corrupt_store_file_are_not_stored(unmeasured_ws: Workspace) -> None:
    admitted_ws = unmeasured_ws
    with admitted_ws.session() as s:
        asset = s.get(Asset, admitted_ws.item("g1-b").audio)
    path = admitted_ws.asset_path(asset)
    path.write_bytes(path.read_bytes()[:1000])  # cut short: unreadable as its hash says it is
    failures = media_conformity_gate(admitted_ws, ITEMS)
    assert failures["g1-b"]  # judged on what the file holds now, as before facts were kept
    with admitted_ws.session() as s:
        assert s.get(MediaFact, asset.sha256) is None
        assert len(list(s.execute(select(MediaFact)).scalars())) == 5


def test_a_release_is_the_same_bytes_with_facts_from_the_import_and_fresh_ones(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    fresh = build_release(admitted_ws, "1.0.0", out=tmp_path / "fresh")  # facts and signatures of the import
    stored = build_release(admitted_ws, "1.0.0", out=tmp_path / "stored")
    with admitted_ws.writing() as s:
        s.execute(delete(MediaFact))
        s.execute(delete(MediaSignature))
    measured_again = build_release(admitted_ws, "1.0.0", out=tmp_path / "again")
    assert fresh.manifest_sha256 == stored.manifest_sha256 == measured_again.manifest_sha256
    files = _files(tmp_path / "fresh")
    assert any(name.startswith("media/") for name in files)
    assert _files(tmp_path / "stored") == files == _files(tmp_path / "again")
