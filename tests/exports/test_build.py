"""Release builds: determinism, gates, immutability, the fixed date, atomicity, content of the side files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from sqlalchemy import select

from curation.errors import CheckFailed, ValidationFailed
from curation.tables import Asset, GateResult, Item
from curation.workspace import Workspace
from exports import build as build_module
from exports.build import build_release, list_releases
from exports.fingerprints import normalize_text
from exports.gates import Gates, default_gates
from exports.publish import GatesFailed
from exports.tables import Release
from tests.exports.workspace_factory import fill_workspace, group_rows

EPOCH_2026_01_02 = "1767312000"


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_two_builds_of_one_state_are_byte_identical(admitted_ws: Workspace, tmp_path: Path) -> None:
    first = build_release(admitted_ws, "1.0.0", out=tmp_path / "a")
    second = build_release(admitted_ws, "1.0.0", out=tmp_path / "b")
    files_a, files_b = tree(tmp_path / "a"), tree(tmp_path / "b")
    assert files_a == files_b
    assert first.manifest_sha256 == second.manifest_sha256
    assert {"data/items.parquet", "data/items.jsonl", "manifest.json", "README.md", "croissant.json"} <= set(files_a)
    assert sum(1 for p in files_a if p.startswith("media/")) == 6  # 2 images + 4 clips
    again = build_release(admitted_ws, "1.0.0", out=tmp_path / "a")
    assert again.unchanged and tree(tmp_path / "a") == files_a


def test_manifest_lists_every_file_with_its_hash_and_fingerprints(admitted_ws: Workspace, tmp_path: Path) -> None:
    result = build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    on_disk = {p for p in tree(tmp_path / "r") if p != "manifest.json"}
    assert {f["path"] for f in manifest["files"]} == on_disk
    for entry in manifest["files"]:
        data = (tmp_path / "r" / entry["path"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["size"] == len(data)
    assert result.manifest_sha256 == hashlib.sha256((tmp_path / "r" / "manifest.json").read_bytes()).hexdigest()
    items = {i["id"]: i for i in manifest["items"]}
    assert sorted(items) == ["g1-a", "g1-b", "g2-a", "g2-b"]
    context = admitted_ws.item("g1-a").context
    assert items["g1-a"]["context_sha256"] == hashlib.sha256(normalize_text(context).encode()).hexdigest()
    assert len(items["g1-a"]["minhash"]) == 128 * 8
    image = admitted_ws.item("g1-a").image
    assert items["g1-a"]["image_sha256"] == image and items["g1-a"]["image"] == f"media/{image}.jpg"


def test_rows_are_sorted_and_records_match_the_workspace(admitted_ws: Workspace, tmp_path: Path) -> None:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    lines = [json.loads(x) for x in (tmp_path / "r" / "data" / "items.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == ["g1-a", "g1-b", "g2-a", "g2-b"]
    g2 = lines[2]
    assert g2["options"] == ["grateful", "sarcastic", "ambivalent"] and g2["answer"] == "A"
    assert g2["language"] == "zh" and g2["tier"] == 2 and g2["ambiguous"] == ["text", "audio"]
    assert g2["image_license"] == "CC0-1.0" and g2["audio_source"] == "voice_acting"
    admission = [json.loads(x) for x in (tmp_path / "r" / "admission.jsonl").read_text().splitlines()]
    first = admission[0]
    assert first["stages"]["subset_checklist"]["reviews"] == 3
    assert first["stages"]["subset_checklist"]["consistent"]["text+image+audio"] == ["A"]
    assert first["stages"]["audio_signoff"]["mean_scores"] == {"naturalness": 4.0, "clarity": 5.0, "artefacts": 4.0}
    assert first["stages"]["group_integration"] == {"reviews": 1, "verdicts": {"pass": 1}}
    assert first["annotations"] == 2 + 2 + 3 + 1 + 1
    attributions = json.loads((tmp_path / "r" / "attributions.json").read_text())["files"]
    assert {a["license"] for a in attributions} == {"CC0-1.0", "CC-BY-4.0"}
    assert all(a["items"] for a in attributions)


def test_a_failing_item_gate_refuses_and_names_items_and_reasons(admitted_ws: Workspace, tmp_path: Path) -> None:
    def loudness(ws: Workspace, ids: list[str]) -> dict[str, list[str]]:
        return {"g2-a": ["media:loudness"]} if "g2-a" in ids else {}

    gates = Gates(item=(*default_gates().item, ("fake_media", loudness)))
    with pytest.raises(GatesFailed) as refused:
        build_release(admitted_ws, "1.0.0", out=tmp_path / "r", gates=gates)
    assert refused.value.items == {"g2-a": ["media:loudness"], "g2-b": ["group:sister_pending"]}
    assert "g2-a: media:loudness" in str(refused.value) and refused.value.exit_code == 1
    assert not (tmp_path / "r").exists() and list_releases(admitted_ws) == []

    partial = build_release(admitted_ws, "1.0.0", out=tmp_path / "r", gates=gates, allow_partial=True)
    assert partial.items == 2 and set(partial.dropped) == {"g2-a", "g2-b"}
    card = (tmp_path / "r" / "README.md").read_text()
    assert "Partial release" in card and "`g2-a`: media:loudness" in card
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["partial"] is True
    assert list_releases(admitted_ws)[0]["partial"] is True


def test_a_workspace_gate_refuses_even_with_allow_partial(admitted_ws: Workspace, tmp_path: Path) -> None:
    gates = Gates(item=default_gates().item, workspace=(("agreement", lambda ws: ["alpha 0.41 < 0.667"]),))
    with pytest.raises(GatesFailed) as refused:
        build_release(admitted_ws, "1.0.0", out=tmp_path / "r", gates=gates, allow_partial=True)
    assert refused.value.workspace == ["agreement: alpha 0.41 < 0.667"]
    assert not (tmp_path / "r").exists()


def test_the_media_gate_refuses_a_missing_store_file(admitted_ws: Workspace, tmp_path: Path) -> None:
    audio = admitted_ws.item("g1-b").audio
    with admitted_ws.session() as s:
        asset = s.get(Asset, audio)
    admitted_ws.asset_path(asset).unlink()
    with pytest.raises(GatesFailed) as refused:
        build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    assert refused.value.items == {"g1-a": ["group:sister_pending"], "g1-b": ["media:missing"]}


def test_held_items_and_their_sisters_stay_out(admitted_ws: Workspace, tmp_path: Path) -> None:
    with admitted_ws.writing() as s:
        item = s.get(Item, "g1-a")
        s.add(GateResult(item_id="g1-a", gate="audit", content_hash=item.content_hash, reasons=["duplicate:c1"]))
    result = build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    ids = [json.loads(x)["id"] for x in (tmp_path / "r" / "data" / "items.jsonl").read_text().splitlines()]
    assert ids == ["g2-a", "g2-b"] and result.items == 2 and not result.dropped
    card = (tmp_path / "r" / "README.md").read_text()
    assert "held: 1" in card and "in_review: 1" in card


def test_a_published_version_is_immutable(admitted_ws: Workspace, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH_2026_01_02)
    build_release(admitted_ws, "1.0.0", out=tmp_path / "v1")
    fill_workspace(admitted_ws, tmp_path / "more", group_rows("g3"))
    with pytest.raises(CheckFailed, match="immutable"):
        build_release(admitted_ws, "1.0.0", out=tmp_path / "again")
    assert not (tmp_path / "again").exists()
    newer = build_release(admitted_ws, "1.1.0", out=tmp_path / "v2")
    assert newer.items == 6
    assert [r["version"] for r in list_releases(admitted_ws)] == ["1.0.0", "1.1.0"]


def test_the_release_date_is_fixed_by_the_first_build(admitted_ws: Workspace, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH_2026_01_02)
    first = build_release(admitted_ws, "1.0.0", out=tmp_path / "a")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1893456000")  # 2030
    second = build_release(admitted_ws, "1.0.0", out=tmp_path / "b")
    assert first.release_date == second.release_date == "2026-01-02"
    assert "Released 2026-01-02" in (tmp_path / "b" / "README.md").read_text()
    with admitted_ws.session() as s:
        assert s.execute(select(Release.release_date)).scalar_one() == "2026-01-02"


def test_an_existing_foreign_folder_is_not_overwritten(admitted_ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "notes.txt").write_text("mine")
    with pytest.raises(CheckFailed, match="other content"):
        build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    assert (tmp_path / "r" / "notes.txt").read_text() == "mine"


def test_an_interrupted_build_leaves_nothing_behind(admitted_ws: Workspace, tmp_path: Path, monkeypatch) -> None:
    def interrupted(_facts):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(build_module, "dataset_card", interrupted)
    out = tmp_path / "releases" / "1.0.0"
    with pytest.raises(KeyboardInterrupt):
        build_release(admitted_ws, "1.0.0", out=out)
    assert list(out.parent.iterdir()) == []
    assert list_releases(admitted_ws) == []


def test_a_killed_builds_leftovers_are_removed_by_the_next_build(admitted_ws: Workspace, tmp_path: Path) -> None:
    parent = tmp_path / "releases"
    stale = parent / ".1.0.0.tmp-deadbeef0000"
    (stale / "media").mkdir(parents=True)
    (parent / ".1.0.0.tmp-deadbeef0000.lock").touch()
    build_release(admitted_ws, "1.0.0", out=parent / "1.0.0")
    assert sorted(p.name for p in parent.iterdir()) == ["1.0.0"]


@pytest.mark.parametrize("version", ["1.0", "v1.0.0", "01.0.0", "1.0.0-", ""])
def test_versions_must_be_semantic(admitted_ws: Workspace, version: str) -> None:
    with pytest.raises(ValidationFailed, match="semantic version"):
        build_release(admitted_ws, version)


def test_nothing_admitted_is_refused(workspace: Workspace, tmp_path: Path) -> None:
    with pytest.raises(CheckFailed, match="no item is admitted yet"):
        build_release(workspace, "0.1.0", out=tmp_path / "r")


def test_default_destination_is_inside_the_workspace(admitted_ws: Workspace) -> None:
    result = build_release(admitted_ws, "2.0.0-rc.1")
    assert result.path == admitted_ws.root / "releases" / "2.0.0-rc.1"
    assert (result.path / "manifest.json").is_file()


def test_the_demo_ends_with_a_verified_release(demo_workspace: Workspace) -> None:
    from exports.verify import verify_release

    folder = demo_workspace.root / "releases" / "0.1.0"
    report = verify_release(folder)
    assert report.ok and report.items == 2
    assert [r["version"] for r in list_releases(demo_workspace)] == ["0.1.0"]


def test_store_corruption_is_caught_while_copying(admitted_ws: Workspace, tmp_path: Path) -> None:
    audio = admitted_ws.item("g1-b").audio
    with admitted_ws.session() as s:
        asset = s.get(Asset, audio)
    path = admitted_ws.asset_path(asset)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(Exception, match="store is corrupt"):
        build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    assert not (tmp_path / "r").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_normalized_derivatives_are_shipped_instead_of_originals(admitted_ws: Workspace, tmp_path: Path) -> None:
    original = admitted_ws.item("g1-a").image
    with admitted_ws.session() as s:
        source = s.get(Asset, original)
    data = admitted_ws.asset_path(source).read_bytes() + b"\0"  # stands in for re-encoded bytes
    sha = hashlib.sha256(data).hexdigest()
    path = admitted_ws.media.path(sha, ".jpg")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    with admitted_ws.writing() as s:
        s.add(
            Asset(
                sha256=sha,
                kind="image",
                mime="image/jpeg",
                ext=".jpg",
                size_bytes=len(data),
                derived_from=original,
                transform={"transform": "image_normalize", "quality": 90},
            )
        )
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    rows = [json.loads(x) for x in (tmp_path / "r" / "data" / "items.jsonl").read_text().splitlines()]
    assert rows[0]["image"] == f"media/{sha}.jpg" and rows[0]["image_sha256"] == sha
    assert not (tmp_path / "r" / "media" / f"{original}.jpg").exists()
    attributions = {a["sha256"]: a for a in json.loads((tmp_path / "r" / "attributions.json").read_text())["files"]}
    assert attributions[sha]["derived_from"] == original and attributions[sha]["license"] == "CC0-1.0"


def test_builds_in_separate_processes_with_other_hash_seeds_are_identical(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys

    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        command = "from omnicurate.cli.main import run; run()"
        args = ["-w", str(admitted_ws.root), "release", "build", "1.0.0", "--out", str(tmp_path / seed)]
        done = subprocess.run([sys.executable, "-c", command, *args], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert tree(tmp_path / "1") == tree(tmp_path / "2")


def test_allow_partial_with_every_item_failing_is_refused(admitted_ws: Workspace, tmp_path: Path) -> None:
    gates = Gates(item=(("everything", lambda ws, ids: {i: ["media:format"] for i in ids}),))
    with pytest.raises(CheckFailed, match="every admitted item failed a gate") as refused:
        build_release(admitted_ws, "1.0.0", out=tmp_path / "r", gates=gates, allow_partial=True)
    assert "g2-b: media:format" in str(refused.value) and not (tmp_path / "r").exists()
