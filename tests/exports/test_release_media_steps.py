"""The release build's media steps after issue 47's pass: the store gate looks at each store file once (sisters
share their image), and the prefetch's files are moved in on the build's own thread after the data files, with
whatever the prefetch could not stage copied then; the release is the same byte for byte either way."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select
from sqlmodel import col

from curation.tables import Asset
from curation.workspace import Workspace
from exports import gates as gates_module
from exports import prefetch as prefetch_module
from exports import writer as writer_module
from exports.build import build_release
from exports.gates import Gates, media_files_gate, run_item_gates
from exports.snapshot import MediaFile

STORE_ONLY = Gates(item=(("media_files", media_files_gate),))
CANDIDATES = ["g1-a", "g1-b", "g2-a", "g2-b"]


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def store_file(ws: Workspace, name: str) -> Path:
    """The store file of the asset imported under ``name`` (g1.jpg, g2-b.wav, ...)."""
    with ws.session() as s:
        asset = s.execute(select(Asset).where(col(Asset.original_name) == name)).scalar_one()
    return ws.asset_path(asset)


@pytest.fixture
def looked_at(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The content hash of every store file the store gate looks at."""
    seen: list[str] = []
    original = gates_module._in_store

    def counting(ws: Workspace, asset: Asset) -> bool:
        seen.append(asset.sha256)
        return original(ws, asset)

    monkeypatch.setattr(gates_module, "_in_store", counting)
    return seen


def test_the_store_gate_looks_at_each_file_once(admitted_ws: Workspace, looked_at: list[str]) -> None:
    assert media_files_gate(admitted_ws, CANDIDATES) == {}
    assert len(looked_at) == len(set(looked_at)) == 6  # two images, each shared by two sisters, and four clips


def test_a_shared_image_missing_fails_every_sister(admitted_ws: Workspace, looked_at: list[str]) -> None:
    store_file(admitted_ws, "g1.jpg").unlink()
    clip = store_file(admitted_ws, "g2-b.wav")
    clip.write_bytes(clip.read_bytes()[:-2])  # not the recorded size
    assert media_files_gate(admitted_ws, CANDIDATES) == {
        "g1-a": ["media:missing"],
        "g1-b": ["media:missing"],
        "g2-b": ["media:missing"],
    }
    groups = {item: item.split("-")[0] for item in CANDIDATES}
    assert run_item_gates(admitted_ws, STORE_ONLY, CANDIDATES, groups) == {
        "g1-a": ["media:missing"],
        "g1-b": ["media:missing"],
        "g2-a": ["group:sister_pending"],
        "g2-b": ["media:missing"],
    }


def test_what_the_prefetch_could_not_stage_is_copied_by_the_build(
    admitted_ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copied: list[str] = []
    plain, hashing = writer_module.copy_plain, writer_module.copy_hashing
    monkeypatch.setattr(writer_module, "copy_plain", lambda s, t: copied.append(str(t)) or plain(s, t))
    monkeypatch.setattr(writer_module, "copy_hashing", lambda s, t: copied.append(str(t)) or hashing(s, t))
    stage = prefetch_module.MediaPrefetch._copy
    refused: list[str] = []

    def refuse_clips(self: prefetch_module.MediaPrefetch, ws: Workspace, media: MediaFile) -> object:
        if media.asset.kind == "audio" and not refused:
            refused.append(media.path)
            return None  # as when the copy failed: nothing staged
        return stage(self, ws, media)

    monkeypatch.setattr(prefetch_module.MediaPrefetch, "_copy", refuse_clips)
    build_release(admitted_ws, "1.0.0", out=tmp_path / "partly-staged")
    assert len(refused) == 1 and len(copied) == 6
    assert [Path(c).name for c in copied if ".tmp-media-" not in c] == [Path(refused[0]).name]
    monkeypatch.setattr(prefetch_module.MediaPrefetch, "start", classmethod(lambda cls, *args: None))
    build_release(admitted_ws, "1.0.0", out=tmp_path / "unstaged")  # the same version: the same bytes
    assert tree(tmp_path / "partly-staged") == tree(tmp_path / "unstaged")
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
