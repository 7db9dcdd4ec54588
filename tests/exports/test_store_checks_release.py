"""Release builds hash a media store file only when it changed since its bytes last matched its name
(``curation.store_checks``): a rebuild copies the others unhashed, ships the same bytes, and still refuses a
store file damaged since, whatever its timestamps say. Every kind's release (mcq, story, judge) does so."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, func, select
from typer.testing import CliRunner

import curation.file_status
import curation.store_checks
from curation.audit import measuring
from curation.audit.measuring import measure_pending
from curation.audit.tables import MediaFact, MediaSignature
from curation.config import MediaSettings
from curation.tables import Asset, StoreCheck
from curation.workspace import Workspace
from exports import writer as writer_module
from exports.build import build_release
from omnicurate.cli.main import app
from tests.conftest import DemoTemplates

runner = CliRunner()


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The store files each build hashes (files changed within the racy window count as settled here)."""
    monkeypatch.setattr(curation.file_status, "RACY_S", 0.0)
    calls: list[str] = []
    original = writer_module.copy_hashing

    def counting(source: Path, target: Path) -> tuple[str, int]:
        calls.append(source.name)
        return original(source, target)

    monkeypatch.setattr(writer_module, "copy_hashing", counting)
    return calls


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _damage_keeping_times(path: Path) -> None:
    """Flip the last byte, size unchanged, and set the modification time back: only the change time moves."""
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_mtime_ns == before.st_mtime_ns and path.stat().st_size == before.st_size


def test_a_rebuild_hashes_no_unchanged_store_file_and_ships_the_same_bytes(
    admitted_ws: Workspace, hashed: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "r"
    build_release(admitted_ws, "1.0.0", out=out)
    media = [p for p in (out / "media").rglob("*") if p.is_file()]
    assert len(hashed) == len(media) > 0  # the first build hashes every shipped medium once
    with admitted_ws.session() as s:
        assert s.execute(select(func.count()).select_from(StoreCheck)).scalar_one() == len(media)
    first = _files(out)
    shutil.rmtree(out)
    hashed.clear()
    build_release(admitted_ws, "1.0.0", out=out)
    assert hashed == []
    assert _files(out) == first


def test_a_store_file_damaged_after_its_check_is_hashed_and_refused(
    admitted_ws: Workspace, hashed: list[str], tmp_path: Path
) -> None:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r1")
    with admitted_ws.session() as s:
        path = admitted_ws.asset_path(s.get(Asset, admitted_ws.item("g1-b").audio))
    _damage_keeping_times(path)
    hashed.clear()
    with pytest.raises(Exception, match="store is corrupt"):
        build_release(admitted_ws, "1.0.1", out=tmp_path / "r2")
    assert set(hashed) == {path.name}  # the prefetch's copy is refused, and the build's own copy tells
    assert not (tmp_path / "r2").exists()


def test_a_file_changed_within_the_racy_window_is_not_taken_on_trust(
    admitted_ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Just imported, the store files changed less than RACY_S ago: no check is kept, the next build hashes."""
    assert curation.store_checks.RACY_S >= 1.0
    monkeypatch.setattr(curation.file_status, "RACY_S", 3600.0)  # "just now" however long a loaded machine stalls
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    with admitted_ws.session() as s:
        assert s.execute(select(func.count()).select_from(StoreCheck)).scalar_one() == 0


def test_the_measuring_step_s_checks_spare_the_first_build_its_hashing(
    admitted_ws: Workspace, hashed: list[str], tmp_path: Path
) -> None:
    """The step that measures media after a large import hashes each store file it reads: the status of every
    file whose bytes matched is kept, so the first build copies them unhashed; one damaged since is refused."""
    with admitted_ws.writing() as s:  # as a pooled import leaves them: nothing measured yet
        s.execute(delete(MediaFact))
        s.execute(delete(MediaSignature))
    measured = measure_pending(admitted_ws)
    with admitted_ws.session() as s:
        assert s.execute(select(func.count()).select_from(StoreCheck)).scalar_one() == measured > 0
    out = tmp_path / "r1"
    build_release(admitted_ws, "1.0.0", out=out)
    shipped = [p for p in (out / "media").rglob("*") if p.is_file()]
    assert hashed == [] and len(shipped) > 0
    assert all(hashlib.sha256(p.read_bytes()).hexdigest() == p.stem for p in shipped)
    with admitted_ws.session() as s:
        path = admitted_ws.asset_path(s.get(Asset, shipped[0].stem))
    _damage_keeping_times(path)
    with pytest.raises(Exception, match="store is corrupt"):
        build_release(admitted_ws, "1.0.1", out=tmp_path / "r2")
    assert path.name in hashed


def test_files_not_settled_when_measured_are_vouched_for_once_they_have(
    admitted_ws: Workspace, hashed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import names its files as it ends, so the first ones the measuring step reads have not settled: it
    hashes them again at its end, where they have, and keeps their checks; one damaged meanwhile gets none."""
    with admitted_ws.writing() as s:
        s.execute(delete(MediaFact))
        s.execute(delete(MediaSignature))
        s.execute(delete(StoreCheck))
    with admitted_ws.session() as s:
        damaged = admitted_ws.asset_path(s.get(Asset, admitted_ws.item("g1-b").audio))
    measure = measuring._measure_stored

    def not_settled_yet(settings: MediaSettings, job: Any) -> tuple[str, Any, str | None]:
        sha, facts, _ = measure(settings, job)
        if job.path == damaged:
            _damage_keeping_times(damaged)  # after it was measured, before the step's end
        return sha, facts, None

    monkeypatch.setattr(measuring, "_measure_stored", not_settled_yet)
    measured = measure_pending(admitted_ws)
    with admitted_ws.session() as s:
        checked = set(s.execute(select(StoreCheck.sha256)).scalars())
    assert measured > 1 and len(checked) == measured - 1 and damaged.stem not in checked


@pytest.mark.parametrize("kind", ["story", "judge"])
def test_every_kind_s_release_hashes_only_changed_files(
    kind: str, hashed: list[str], tmp_path: Path, demo_templates: DemoTemplates
) -> None:
    copy = demo_templates.copy(kind, tmp_path / "ws")  # its checks name the template's files: all hashed again
    demo_templates.discard(copy)
    root = copy.root
    hashed.clear()  # the template's own build, when this test was the first to ask for it
    built = runner.invoke(app, ["-w", str(root), "release", "build", "2.0.0", "--json"], catch_exceptions=False)
    assert built.exit_code == 0, built.output
    shipped = [p for p in (Path(json.loads(built.stdout)["path"]) / "media").rglob("*") if p.is_file()]
    assert len(hashed) == len(shipped) > 0
    hashed.clear()
    again = runner.invoke(app, ["-w", str(root), "release", "build", "2.0.1"], catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert hashed == []
    ws = Workspace.open(root)
    try:
        with ws.session() as s:
            asset = s.execute(select(Asset).where(Asset.sha256 == shipped[0].stem)).scalar_one()
        _damage_keeping_times(ws.asset_path(asset))
    finally:
        ws.close()
    refused = runner.invoke(app, ["-w", str(root), "release", "build", "2.0.2"])
    assert refused.exit_code != 0 and "store is corrupt" in (refused.stderr or "") + refused.output
    assert hashed == [shipped[0].name]
