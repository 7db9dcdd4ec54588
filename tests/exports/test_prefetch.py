"""The media prefetch (exports.prefetch): a build that copies its candidates' media while the gates run
writes the same release, byte for byte, as one that copies them after, copies each file once, and leaves no
staging folder behind whatever the gates decide."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from curation.workspace import Workspace
from exports import build as build_module
from exports import file_copy
from exports import prefetch as prefetch_module
from exports import writer as writer_module
from exports.build import build_release
from exports.gates import Gates, media_files_gate
from exports.publish import GatesFailed
from exports.snapshot import Snapshot, take_snapshot

STORE_ONLY = Gates(item=(("media_files", media_files_gate),))


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every file copied into a release or a staging folder, hashed on the way or not: a file
    that had settled when a build checked it (``curation.file_status``; a slow fixture under load) is copied by
    the next build without hashing (seen in CI: the second build counted 0 hashed copies of 6)."""
    copied: list[str] = []

    def counting(copy: Callable[[Path, Path], Any]) -> Callable[[Path, Path], Any]:
        def counted(source: Path, target: Path) -> Any:
            copied.append(target.parent.parent.name + "/" + target.name)
            return copy(source, target)

        return counted

    monkeypatch.setattr(writer_module, "copy_hashing", counting(writer_module.copy_hashing))
    monkeypatch.setattr(writer_module, "copy_plain", counting(writer_module.copy_plain))
    return copied


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name)


@pytest.fixture
def snapshots(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The items of every snapshot a build takes (the prefetch's, and the build's own where it needs one)."""
    taken: list[list[str]] = []

    def counting(ws: Workspace, item_ids: list[str]) -> Snapshot:
        taken.append(sorted(item_ids))
        return take_snapshot(ws, item_ids)

    monkeypatch.setattr(prefetch_module, "take_snapshot", counting)
    monkeypatch.setattr(build_module, "take_snapshot", counting)
    return taken


def test_a_prefetched_build_is_the_build_without_it_byte_for_byte(
    admitted_ws: Workspace,
    tmp_path: Path,
    copies: list[str],
    snapshots: list[list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "prefetched")
    staged = [c for c in copies if ".tmp-media-" in c]
    assert len(copies) == 6 and len(staged) == 6  # every medium copied once, all while the gates ran
    assert len(snapshots) == 1  # nothing dropped: the build writes the snapshot the prefetch took
    copies.clear()
    monkeypatch.setattr(prefetch_module.MediaPrefetch, "start", classmethod(lambda cls, *args: None))
    build_release(admitted_ws, "1.1.0", out=tmp_path / "plain")
    assert len(copies) == 6 and not [c for c in copies if ".tmp-media-" in c]
    prefetched, plain = tree(tmp_path / "prefetched"), tree(tmp_path / "plain")
    assert {p: b for p, b in prefetched.items() if p.startswith("media/")} == {
        p: b for p, b in plain.items() if p.startswith("media/")
    }
    monkeypatch.undo()
    copies.clear()
    build_release(admitted_ws, "1.1.0", out=tmp_path / "plain-again")  # the same version, now prefetched
    assert tree(tmp_path / "plain-again") == plain
    assert leftovers(tmp_path) == []


def test_media_of_items_a_gate_drops_are_staged_but_never_shipped(
    admitted_ws: Workspace, tmp_path: Path, copies: list[str], snapshots: list[list[str]]
) -> None:
    def drop_g1(ws: Workspace, candidates: list[str]) -> dict[str, list[str]]:
        return {i: ["media:format"] for i in candidates if i.startswith("g1-")}

    gates = Gates(item=(("media_files", drop_g1),))
    with pytest.raises(GatesFailed):
        build_release(admitted_ws, "1.0.0", out=tmp_path / "refused", gates=gates)
    assert leftovers(tmp_path) == [] and not (tmp_path / "refused").exists()
    copies.clear()
    snapshots.clear()
    result = build_release(admitted_ws, "1.0.0", out=tmp_path / "partial", gates=gates, allow_partial=True)
    shipped = sorted(p for p in tree(tmp_path / "partial") if p.startswith("media/"))
    assert result.items == 2 and len(shipped) == 3  # g2's image and two clips
    assert [len(ids) for ids in snapshots] == [4, 2]  # the candidates' snapshot is not the released items'
    assert len(copies) == 6  # all six staged; g1's three were discarded with the staging folder
    assert leftovers(tmp_path) == []
    copies.clear()
    full = build_release(admitted_ws, "2.0.0", out=tmp_path / "full", gates=STORE_ONLY)
    assert full.items == 4
    assert {p: b for p, b in tree(tmp_path / "partial").items() if p.startswith("media/")}.items() <= tree(
        tmp_path / "full"
    ).items()


def test_no_prefetch_where_the_destination_folder_does_not_exist_yet(
    admitted_ws: Workspace, tmp_path: Path, copies: list[str]
) -> None:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "new" / "folder" / "r", gates=STORE_ONLY)
    assert len(copies) == 6 and not [c for c in copies if ".tmp-media-" in c]
    assert leftovers(tmp_path / "new" / "folder") == []


def test_media_staged_by_copy_processes_ship_the_same_release(
    admitted_ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large media are staged by copy processes (exports.file_copy), which the build's own thread does not slow;
    the release is the one copied in this process, byte for byte, and every medium is counted once."""
    spawned: list[int] = []
    in_processes = file_copy.copy_in_processes

    def counting(jobs: list[file_copy.CopyJob], processes: int, children: list[object]) -> object:
        spawned.append(len(jobs))
        return in_processes(jobs, processes, children)  # type: ignore[arg-type]

    monkeypatch.setattr(file_copy, "copy_in_processes", counting)
    monkeypatch.setattr(file_copy, "PROCESS_BYTES", 0)
    checks: list[writer_module.StoreChecks] = []
    of = writer_module.StoreChecks.of
    monkeypatch.setattr(
        build_module.StoreChecks, "of", classmethod(lambda cls, ws: checks.append(of(ws)) or checks[-1])
    )
    build_release(admitted_ws, "1.0.0", out=tmp_path / "processes")
    assert spawned == [6] and checks[0].hashed + checks[0].plain == 6
    monkeypatch.setattr(prefetch_module.MediaPrefetch, "start", classmethod(lambda cls, *args: None))
    build_release(admitted_ws, "1.1.0", out=tmp_path / "here")
    assert spawned == [6]
    processes, here = tree(tmp_path / "processes"), tree(tmp_path / "here")
    assert {p: b for p, b in processes.items() if p.startswith("media/")} == {
        p: b for p, b in here.items() if p.startswith("media/")
    }
    assert leftovers(tmp_path) == []


def test_a_build_that_ends_early_kills_its_copy_processes(admitted_ws: Workspace, tmp_path: Path) -> None:
    """A refused build does not wait for its staging copies: closing the prefetch kills the copy processes."""
    import subprocess
    import sys
    import time

    from exports.writer import StoreChecks

    target = tmp_path / "r"
    prefetch = prefetch_module.MediaPrefetch(admitted_ws, target, lambda data: None, [], StoreChecks({}))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    prefetch._children.append(child)
    started = time.monotonic()
    prefetch.close()
    assert child.wait(timeout=10) != 0 and time.monotonic() - started < 10
