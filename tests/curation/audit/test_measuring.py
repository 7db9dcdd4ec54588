"""A large import leaves measuring its media to a later step: a detached background process that the media gate
and the audit wait for, or the gates themselves; either way each medium ends with the facts and signature a
one-process import stores, and a corrupt store file gets none."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from curation import workers
from curation.audit import measuring
from curation.audit.measuring import LOCK_NAME, measure_pending, pending, start_in_background
from curation.audit.tables import MediaFact, MediaSignature
from curation.items import import_items
from curation.tables import Asset
from curation.workspace import Workspace
from exports.gates import media_conformity_gate
from omnicurate.cli.main import app
from tests.media_factory import item_row, write_items

ROWS = [item_row(f"i{i}", group=f"g{i // 2}", image=f"media/g{i // 2}.jpg") for i in range(6)]
ROWS[1].update(context="他说：“这个建议真是太有帮助了。”", language="zh")


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Imports of a few files read them in two worker processes, as a large import does."""
    monkeypatch.setattr(workers, "MIN_PARALLEL", 4)
    monkeypatch.setattr(workers, "cpus", lambda: 2)


@pytest.fixture
def ws(workspace: Workspace) -> Workspace:
    workspace.add_person("ann1", ["author"])
    return workspace


def stored(ws: Workspace) -> tuple[dict[str, object], dict[str, object]]:
    with ws.session() as s:
        facts = {f.sha256: f.data for f in s.execute(select(MediaFact)).scalars()}
        signatures = {m.sha256: m.data for m in s.execute(select(MediaSignature)).scalars()}
    return facts, signatures


def test_a_pooled_import_defers_measuring_to_the_same_results(
    ws: Workspace, make_workspace, pooled: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_items(tmp_path / "in", ROWS)
    report = import_items(ws, path)
    media = report.new_media
    assert report.measuring_deferred and media >= 6
    assert stored(ws) == ({}, {}) and len(pending(ws)) == media
    assert measure_pending(ws) == media
    assert pending(ws) == [] and measure_pending(ws) == 0
    monkeypatch.setattr(workers, "MIN_PARALLEL", 10**6)
    alone = make_workspace("alone")
    alone.add_person("ann1", ["author"])
    assert not import_items(alone, path).measuring_deferred
    assert stored(ws) == stored(alone)  # as a one-process import measures them


def test_the_media_gate_waits_for_a_running_background_step(ws: Workspace, pooled: None, tmp_path: Path) -> None:
    import_items(ws, write_items(tmp_path / "in", ROWS))
    held = (ws.root / LOCK_NAME).open("a")
    fcntl.flock(held, fcntl.LOCK_EX)  # as the background step holds it
    result: dict[str, object] = {}
    gate = threading.Thread(target=lambda: result.update(failures=media_conformity_gate(ws, [r["id"] for r in ROWS])))
    gate.start()
    time.sleep(0.5)
    assert gate.is_alive() and not result  # waiting
    measure_facts_as_the_background_would(ws)
    fcntl.flock(held, fcntl.LOCK_UN)
    held.close()
    gate.join(timeout=60)
    assert not gate.is_alive() and pending(ws) == []
    assert result == {"failures": media_conformity_gate(ws, [r["id"] for r in ROWS])}  # judged on those facts


def measure_facts_as_the_background_would(ws: Workspace) -> None:
    """Measure under the held lock without taking it again (a second flock here would wait for ourselves)."""
    jobs = [measuring._Stored(a.sha256, a.kind, ws.asset_path(a), a.original_name) for a in pending(ws)]
    found = {sha: m for sha, m, _ in (measuring._measure_stored(ws.settings.media, j) for j in jobs) if m is not None}
    with ws.writing() as s:
        measuring.store_measured(s, found)


def test_a_corrupt_store_file_gets_no_facts(ws: Workspace, pooled: None, tmp_path: Path) -> None:
    media = import_items(ws, write_items(tmp_path / "in", ROWS)).new_media
    with ws.session() as s:
        asset = s.get(Asset, ws.item("i1").audio)
    path = ws.asset_path(asset)
    path.write_bytes(path.read_bytes()[:1000])
    assert measure_pending(ws) == media - 1
    assert [a.sha256 for a in pending(ws)] == [asset.sha256]
    assert media_conformity_gate(ws, ["i1"])["i1"]  # judged on what the file holds now


def test_the_background_step_runs_detached_and_measures_everything(ws: Workspace, pooled: None, tmp_path: Path) -> None:
    media = import_items(ws, write_items(tmp_path / "in", ROWS)).new_media
    pid = start_in_background(ws)
    assert pid is not None and measuring._started[-1].pid == pid
    assert measuring._started[-1].wait(timeout=120) == 0, (ws.root / measuring.LOG_NAME).read_text()
    assert pending(ws) == [] and len(stored(ws)[0]) == media
    assert start_in_background(ws) is None  # nothing left to measure: nothing started


def test_the_cli_import_starts_it_and_media_measure_waits_for_it(pooled: None, tmp_path: Path) -> None:
    runner = CliRunner()
    root = str(tmp_path / "ws")
    assert runner.invoke(app, ["init", root]).exit_code == 0
    assert runner.invoke(app, ["-w", root, "people", "add", "ann1", "--role", "author"]).exit_code == 0
    imported = runner.invoke(app, ["-w", root, "import", "items", str(write_items(tmp_path / "in", ROWS))])
    assert imported.exit_code == 0, imported.output
    assert "in the background (process " in imported.stderr and "curate media measure" in imported.stderr
    waited = runner.invoke(app, ["-w", root, "media", "measure", "--json"])
    assert waited.exit_code == 0, waited.output
    assert '"measured"' in waited.stdout
    ws = Workspace.open(Path(root))
    try:
        assert pending(ws) == [] and len(stored(ws)[1]) == len(stored(ws)[0]) >= 6
    finally:
        ws.close()
    measuring._started[-1].wait(timeout=120)
