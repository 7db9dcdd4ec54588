"""Writers in separate processes: concurrent imports and reviews, and imports killed midway."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select

from curation.items import import_items
from curation.tables import Asset, Event, Item, ItemRevision, ReviewRecord
from curation.workflow import derive_status
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items

ROOT = Path(__file__).resolve().parents[2]


def snapshot(ws: Workspace) -> dict:
    """Everything an import can touch: table contents and the media files on disk."""
    with ws.session() as s:
        items = sorted((i.id, i.revision, i.content_hash) for i in s.scalars(select(Item)))
        revisions = sorted((r.item_id, r.revision) for r in s.scalars(select(ItemRevision)))
        assets = sorted(a.sha256 for a in s.scalars(select(Asset)))
        events = len(s.scalars(select(Event)).all())
    files = sorted(str(p.relative_to(ws.media.root)) for p in ws.media.root.rglob("*") if p.is_file())
    return {"items": items, "revisions": revisions, "assets": assets, "events": events, "files": files}


def test_concurrent_importers_lose_nothing(
    workspace: Workspace, tmp_path: Path, curate_process: Callable[..., subprocess.Popen[str]]
) -> None:
    workspace.add_person("ann1", ["author"])
    files = []
    for n in range(4):
        rows = [item_row(f"p{n}-{k}", group=f"g{n}") for k in range(15)]
        files.append(write_items(tmp_path / f"in{n}", rows))
    # the same file twice as well: the second import must become a no-op, not a duplicate
    procs = [curate_process("-w", str(workspace.root), "import", "items", str(f)) for f in [*files, files[0]]]
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    snap = snapshot(workspace)
    assert len(snap["items"]) == 60 and len(snap["revisions"]) == 60
    assert all(rev == 1 for _, rev, _ in snap["items"])


def test_reviewers_recording_at_the_same_moment_on_one_item(
    workspace: Workspace, tmp_path: Path, curate_process: Callable[..., subprocess.Popen[str]]
) -> None:
    workspace.add_person("ann1", ["author"])
    for r in ("rev1", "rev2", "rev3", "rev4"):
        workspace.add_person(r, ["reviewer"])
    import_items(workspace, write_items(tmp_path / "in", [item_row("a"), item_row("b", answer="B")]))
    sets = {
        "text": ["A", "B"],
        "image": ["A", "C"],
        "audio": ["A", "D"],
        "text+image": ["A", "B"],
        "text+audio": ["A", "C"],
        "image+audio": ["A", "D"],
        "text+image+audio": ["A"],
    }
    files = []
    for r in ("rev1", "rev2", "rev3", "rev4"):
        path = tmp_path / f"{r}.jsonl"
        path.write_text(
            json.dumps({"item": "a", "stage": "subset_checklist", "reviewer": r, "consistent": sets})
            + "\n"
            + json.dumps({"item": "a", "stage": "grammar", "reviewer": r, "verdict": "pass"})
            + "\n"
        )
        files.append(path)
    procs = [curate_process("-w", str(workspace.root), "import", "reviews", str(f)) for f in files + files[:2]]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    with workspace.session() as s:
        records = s.scalars(select(ReviewRecord).where(ReviewRecord.subject == "item:a")).all()
    assert sorted((r.stage, r.reviewer) for r in records) == sorted(
        (stage, r) for stage in ("grammar", "subset_checklist") for r in ("rev1", "rev2", "rev3", "rev4")
    )
    status = {st.id: st for st in derive_status(workspace)}
    assert status["a"].stage == "audio_signoff"  # grammar and checklist counted once per reviewer


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import curation.items as items, curation.media as media
    from curation.workspace import Workspace
    where = sys.argv[3]
    if where == "before_commit":
        original = items._write
        def write_then_die(*a, **k):
            original(*a, **k)
            a[0].flush()
            os.kill(os.getpid(), signal.SIGKILL)
        items._write = write_then_die
    else:
        def die(self):
            os.kill(os.getpid(), signal.SIGKILL)
        media.Staging.commit = die
    items.import_items(Workspace.open(Path(sys.argv[1])), Path(sys.argv[2]))
    """
)


def _kill_import(ws: Workspace, path: Path, where: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, str(ws.root), str(path), where],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr


def test_import_killed_before_commit_leaves_the_workspace_as_it_was(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_person("ann1", ["author"])
    import_items(workspace, write_items(tmp_path / "first", [item_row("a")]))
    before = snapshot(workspace)
    rows = [item_row("a", context="An edited context."), *[item_row(f"n{k}") for k in range(10)]]
    path = write_items(tmp_path / "second", rows)
    _kill_import(workspace, path, "before_commit")
    reopened = Workspace.open(workspace.root)
    assert snapshot(reopened) == before
    assert not list((reopened.media.root / ".staging").glob("*"))
    assert import_items(reopened, path).revised == ["a"]  # and the same import then works


def test_import_killed_after_commit_rolls_media_forward(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_person("ann1", ["author"])
    path = write_items(tmp_path / "in", [item_row(f"n{k}") for k in range(5)])
    _kill_import(workspace, path, "after_commit")
    reopened = Workspace.open(workspace.root)
    with reopened.session() as s:
        assets = s.scalars(select(Asset)).all()
    assert len(assets) == 6
    assert all(reopened.asset_path(a).is_file() for a in assets)
    assert not list((reopened.media.root / ".staging").glob("*"))


def test_recovery_never_touches_a_live_writers_staging(tmp_path: Path) -> None:
    from curation.media import MediaStore

    store = MediaStore(tmp_path / "media")
    live = store.stage()
    live.add_bytes(b"live bytes", "a" * 64, ".wav")
    dead = tmp_path / "media" / ".staging" / "deadbeef"
    dead.mkdir()
    (dead / f"{'b' * 64}.wav").write_bytes(b"referenced")
    (dead / f"{'c' * 64}.wav").write_bytes(b"orphan")
    (dead.with_name("deadbeef.lock")).touch()
    (dead.with_name("stray.lock")).touch()  # a writer that died before making its folder
    store.recover([("b" * 64, ".wav")])
    assert live.folder.is_dir() and (live.folder / f"{'a' * 64}.wav").is_file()
    assert store.path("b" * 64, ".wav").read_bytes() == b"referenced"
    assert not store.has("c" * 64, ".wav")
    assert sorted(p.name for p in (tmp_path / "media" / ".staging").iterdir()) == sorted(
        [live.folder.name, f"{live.folder.name}.lock"]
    )
    live.commit()
    assert store.has("a" * 64, ".wav") and not list((tmp_path / "media" / ".staging").iterdir())
