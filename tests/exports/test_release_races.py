"""Issue 13: releases under races, crashes and tampering (each test names the case it holds)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import select

from curation.errors import CheckFailed, ValidationFailed
from curation.workspace import Workspace
from exports import build as build_module
from exports.build import build_release, list_releases
from exports.gates import Gates, media_files_gate
from exports.pending import journal_path
from exports.publish import reconcile_releases
from exports.tables import Release
from exports.verify import verify_release
from tests.conftest import DemoTemplates
from tests.exports.workspace_factory import fill_workspace, group_rows

ROOT = Path(__file__).resolve().parents[2]
STORE_ONLY = Gates(item=(("media_files", media_files_gate),))


def releases(ws: Workspace) -> list[Release]:
    with ws.session() as s:
        return list(s.scalars(select(Release)))


# ----- case 3: versions validated exactly ------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["1.0.0\n", "1.0.0 ", "1.0.0-" + "a" * 300, "01.0.0"])
def test_case3_versions_are_validated_exactly(admitted_ws: Workspace, tmp_path: Path, version: str) -> None:
    with pytest.raises(ValidationFailed):
        build_release(admitted_ws, version, out=tmp_path / "r", gates=STORE_ONLY)
    assert releases(admitted_ws) == [] and not (tmp_path / "r").exists()


# ----- case 4: concurrent builds of one version --------------------------------------------------------------------
def test_case4_two_simultaneous_builds_of_one_version_one_wins_the_other_is_told(
    admitted_ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    both_writing = threading.Barrier(2, timeout=60)
    real_write = build_module._write

    def write_together(*args):  # type: ignore[no-untyped-def]
        both_writing.wait()  # both builds have read "1.0.0 is not published" before either publishes
        return real_write(*args)

    monkeypatch.setattr(build_module, "_write", write_together)
    outcomes: dict[str, object] = {}

    def build(name: str) -> None:
        ws = Workspace.open(admitted_ws.root)
        try:
            outcomes[name] = build_release(ws, "1.0.0", out=tmp_path / name, gates=STORE_ONLY)
        except CheckFailed as exc:
            outcomes[name] = exc
        finally:
            ws.close()

    threads = [threading.Thread(target=build, args=(name,)) for name in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    losers = [n for n, o in outcomes.items() if isinstance(o, CheckFailed)]
    winners = [n for n, o in outcomes.items() if not isinstance(o, CheckFailed)]
    assert len(losers) == 1 and len(winners) == 1
    assert "was published by another build while this one ran" in str(outcomes[losers[0]])
    assert not (tmp_path / losers[0]).exists()
    [row] = releases(admitted_ws)
    assert row.path == str((tmp_path / winners[0]).resolve())
    assert verify_release(tmp_path / winners[0], row.manifest_sha256).ok


# ----- case 5: a crash between the folder rename and the database insert ---------------------------------------------
KILL_AFTER_RENAME = """
import os, sys
from pathlib import Path
from curation.workspace import Workspace
from exports import build, publish
from exports.gates import Gates, media_files_gate

def killed(*args, **kwargs):
    os.kill(os.getpid(), 9)  # kill -9 after the rename, before the commit

publish._register = killed
build.build_release(Workspace.open(Path(sys.argv[1])), "1.0.0", out=Path(sys.argv[2]),
                    gates=Gates(item=(("media_files", media_files_gate),)))
"""


def test_case5_a_kill_between_rename_and_commit_is_reconciled_by_the_next_command(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", KILL_AFTER_RENAME, str(admitted_ws.root), str(out)], env=env, capture_output=True
    )
    assert done.returncode == -9, done.stderr.decode()
    assert (out / "manifest.json").is_file() and releases(admitted_ws) == []
    assert journal_path(admitted_ws.root, "1.0.0").is_file()
    [listed] = list_releases(admitted_ws)  # the next command finds and registers it
    manifest_sha = hashlib.sha256((out / "manifest.json").read_bytes()).hexdigest()
    assert listed["version"] == "1.0.0" and listed["manifest_sha256"] == manifest_sha
    assert not journal_path(admitted_ws.root, "1.0.0").exists()
    assert [e.action for e in admitted_ws.events("release:1.0.0")] == ["release.published"]
    fill_workspace(admitted_ws, tmp_path / "more", group_rows("g3"))  # other content for the same version
    with pytest.raises(CheckFailed, match="published on .* with other content"):
        build_release(admitted_ws, "1.0.0", out=tmp_path / "other", gates=STORE_ONLY)


def test_case5_a_journal_without_its_folder_publishes_nothing(admitted_ws: Workspace, tmp_path: Path) -> None:
    journal = journal_path(admitted_ws.root, "1.0.0")
    journal.parent.mkdir()
    journal.write_text(json.dumps({"version": "1.0.0", "path": str(tmp_path / "never"), "manifest_sha256": "0" * 64}))
    assert reconcile_releases(admitted_ws) == []
    assert releases(admitted_ws) == [] and not journal.exists()


# ----- case 7: verify checks every cross-reference and refuses symlinks -----------------------------------------------
def rewrite_manifest(folder: Path, change) -> None:  # type: ignore[no-untyped-def]
    manifest = json.loads((folder / "manifest.json").read_text())
    change(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2))


def test_case7_verify_catches_per_item_hashes_that_contradict_the_file_list(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    build_release(admitted_ws, "1.0.0", out=out, gates=STORE_ONLY)

    def forge(manifest: dict) -> None:  # type: ignore[type-arg]
        manifest["items"][0]["audio_sha256"] = "f" * 64
        manifest["items"][1]["context_sha256"] = "0" * 64

    rewrite_manifest(out, forge)
    found = {(m.kind, m.path, m.detail.split(":")[0]) for m in verify_release(out).mismatches}
    assert ("invalid", "manifest.json", "item g1-a") in found and ("invalid", "manifest.json", "item g1-b") in found


def test_case7_verify_refuses_a_symlink_to_an_identical_copy(admitted_ws: Workspace, tmp_path: Path) -> None:
    out = tmp_path / "r"
    build_release(admitted_ws, "1.0.0", out=out, gates=STORE_ONLY)
    victim = next((out / "media").iterdir())
    outside = tmp_path / "outside.bin"
    shutil.copyfile(victim, outside)
    victim.unlink()
    victim.symlink_to(outside)
    report = verify_release(out)
    assert [(m.kind, m.path) for m in report.mismatches] == [("symlink", victim.relative_to(out).as_posix())]


def test_case9_manifest_entries_missing_id_or_with_null_sha256_are_mismatches(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    build_release(admitted_ws, "1.0.0", out=out, gates=STORE_ONLY)

    def damage(manifest: dict) -> None:  # type: ignore[type-arg]
        manifest["files"][0]["sha256"] = None
        del manifest["items"][0]["id"]

    rewrite_manifest(out, damage)
    report = verify_release(out)
    details = [m.detail for m in report.mismatches]
    assert "file entry 1 holds a malformed path, sha256 or size" in details
    assert "item record 1 has no string id" in details and not report.ok


# ----- case 8: optional modules imported before the background thread ---------------------------------------------
def test_case8_gate_modules_are_imported_before_the_background_thread_starts(
    admitted_ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "oc_lazy_gate_dependency.py"
    module.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[bool] = []

    def workspace_gate(ws: Workspace) -> list[str]:
        seen.append("oc_lazy_gate_dependency" in sys.modules)  # runs on the background thread
        return []

    gates = Gates(item=STORE_ONLY.item, workspace=(("probe", workspace_gate),), imports=("oc_lazy_gate_dependency",))
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r", gates=gates)
    assert seen == [True]
    sys.modules.pop("oc_lazy_gate_dependency", None)


FIRST_IMPORTS = """
import json, sys, threading
from pathlib import Path
from curation.workspace import Workspace
from exports.build import build_release

first = {}

def imported(event, args):
    if event == "import" and args[0] not in sys.modules:
        first.setdefault(threading.current_thread().name, []).append(args[0])

ws = Workspace.open(Path(sys.argv[1]))
sys.addaudithook(imported)
build_release(ws, "1.0.0", out=Path(sys.argv[2]))
heavy = ("sklearn", "scipy", "datasketch", "pyloudnorm")
print(json.dumps({"first": first, "heavy": [m for m in heavy if m in sys.modules]}))
"""


def test_case8_a_build_in_a_new_process_imports_nothing_new_off_its_own_thread(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    """The default gates' up-front imports cover what runs beside the build's own thread (the agreement gate,
    the media prefetch, the media copy); a build whose media facts are stored imports no media library and,
    since the audit computes its MinHash itself, neither datasketch nor SciPy."""
    admitted_ws.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_IMPORTS, str(admitted_ws.root), str(tmp_path / "r")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert "MainThread" in found["first"], "the build's own thread imported what it needed"
    assert {thread: names for thread, names in found["first"].items() if thread != "MainThread"} == {}
    assert found["heavy"] == []
    assert (tmp_path / "r" / "manifest.json").is_file()


# ----- case 10: the release's smaller ones -------------------------------------------------------------------------
def test_case10_out_inside_the_workspace_is_refused_before_anything_is_written(
    admitted_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build_module, "_write", lambda *a: pytest.fail("the release was written"))
    for out in (admitted_ws.root, admitted_ws.root / "media" / "r", admitted_ws.root.parent):
        with pytest.raises(ValidationFailed, match="workspace folder or inside it"):
            build_release(admitted_ws, "1.0.0", out=out, gates=STORE_ONLY)


def test_case10_a_renamed_workspace_folder_keeps_the_published_name(admitted_ws: Workspace, tmp_path: Path) -> None:
    first = build_release(admitted_ws, "1.0.0", out=tmp_path / "a", gates=STORE_ONLY)
    admitted_ws.close()
    moved = admitted_ws.root.with_name("renamed")
    admitted_ws.root.rename(moved)
    ws = Workspace.open(moved)
    try:
        again = build_release(ws, "1.0.0", out=tmp_path / "b", gates=STORE_ONLY)
    finally:
        ws.close()
    assert again.manifest_sha256 == first.manifest_sha256
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["name"] == "ws"


def test_rebuilding_a_published_version_with_other_items_refuses_before_copying_any_medium(
    admitted_ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r", gates=STORE_ONLY)
    fill_workspace(admitted_ws, tmp_path / "more", group_rows("g3"))  # other content for the same version
    copied: list[object] = []
    monkeypatch.setattr(build_module.ReleaseWriter, "copy_media", lambda self, files: copied.append(files))
    with pytest.raises(CheckFailed, match="published on .* with other content .*data/items.jsonl differs"):
        build_release(admitted_ws, "1.0.0", out=tmp_path / "other", gates=STORE_ONLY)
    assert copied == [] and not (tmp_path / "other").exists()


def test_rebuilding_a_published_judge_release_with_other_data_refuses_before_copying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_templates: DemoTemplates
) -> None:
    from curation.kinds.judge import record_store, task_store
    from curation.kinds.judge.schema import ResponseReviewRecord
    from exports.judge_release import build_judge_release

    ws = demo_templates.copy("judge", tmp_path / "judge")  # the demo published 1.0.0
    try:
        response = next(r for r in task_store.responses(ws) if r.id == "t2t-01:sys-a")
        record_store.record_response_review(
            ws, ResponseReviewRecord(response=response.id, reviewer="rev1", usable=False, reason="off-topic after all")
        )
        copied: list[object] = []
        monkeypatch.setattr(build_module.ReleaseWriter, "copy_media", lambda self, files: copied.append(files))
        with pytest.raises(CheckFailed, match=r"published on .* with other content \(its data/.* differs\)"):
            build_judge_release(ws, "1.0.0")
        assert copied == []
    finally:
        demo_templates.discard(ws)
