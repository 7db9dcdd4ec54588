"""A large import reads its media in worker processes: it stores exactly what the one-process path stores,
refuses the same lines with the same problems, and leaves nothing when refused or interrupted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from curation import item_media, workers
from curation.audit.measuring import measure_pending, pending
from curation.errors import ValidationFailed
from curation.items import import_items
from curation.workspace import Workspace
from tests.media_factory import item_row, make_tone, write_items

TABLES = ("asset", "media_fact", "media_signature", "scene_group", "item", "item_revision", "event")
TIMES = {"created_at", "updated_at", "at"}


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Imports of a few files use two worker processes; returns the list that counts pools started."""
    started: list[int] = []
    real_open = workers.Runner._open

    def counting_open(self):  # type: ignore[no-untyped-def]
        started.append(self.workers)
        return real_open(self)

    monkeypatch.setattr(workers, "MIN_PARALLEL", 4)
    monkeypatch.setattr(workers, "CHUNK", 3)
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    monkeypatch.setattr(workers.Runner, "_open", counting_open)
    return started


def alone_report_deferred(ws: Workspace) -> bool:
    """Whether any medium of ``ws`` lacks its facts (a one-process import measures them as it reads them)."""
    return bool(pending(ws))


def rows(n: int) -> list[dict[str, Any]]:
    """n items in groups of three sisters (one shared image per group, a clip each); a text+audio item and an
    image-only one among them, and Chinese text."""
    out = []
    for i in range(n):
        row = item_row(f"i{i:03d}", group=f"g{i // 3}", image=f"media/g{i // 3}.jpg", answer="ABCD"[i % 4])
        if i % 7 == 3:
            row.update(modalities=["text", "audio"], image=None, taxonomy={"text": "pragmatic", "audio": "prosodic"})
            row["provenance"] = {"audio": row["provenance"]["audio"]}
            row["ambiguous"] = ["text", "audio"]
        if i % 5 == 1:
            row["context"] = "他说：“这个建议真是太有帮助了。”"
            row["language"] = "zh"
        out.append(row)
    return out


def dump(ws: Workspace) -> dict[str, Any]:
    """Every row an import writes (timestamps aside) and every stored file, by name."""
    found: dict[str, Any] = {}
    with ws.engine.connect() as c:
        for table in TABLES:
            result = c.execute(text(f"SELECT * FROM {table}"))
            keys = list(result.keys())
            found[table] = sorted(
                json.dumps({k: repr(v) for k, v in zip(keys, row, strict=True) if k not in TIMES}, sort_keys=True)
                for row in result
            )
    found["files"] = sorted(p.name for p in ws.media.root.rglob("*") if p.is_file() and ".staging" not in p.parts)
    return found


def leftovers(ws: Workspace) -> list[Path]:
    return [p for p in ws.media.root.rglob("*") if p.is_file()]


def counted(ws: Workspace) -> list[int]:
    with ws.engine.connect() as c:
        return [c.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES]


def fresh(make_workspace: Callable[[str], Workspace], name: str) -> Workspace:
    ws = make_workspace(name)
    ws.add_person("ann1", ["author"])
    return ws


def test_pooled_import_stores_what_the_one_process_import_stores(
    make_workspace: Callable[[str], Workspace], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_items(tmp_path / "in", rows(30))
    alone = fresh(make_workspace, "alone")
    assert import_items(alone, path).summary() == "30 created, 0 revised, 0 unchanged, 28 new media file(s)"

    started: list[int] = []
    real_open = workers.Runner._open
    monkeypatch.setattr(workers.Runner, "_open", lambda self: started.append(1) or real_open(self))
    monkeypatch.setattr(workers, "MIN_PARALLEL", 4)
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    shared = fresh(make_workspace, "shared")
    progress: list[tuple[int, int]] = []
    report = import_items(shared, path, progress=lambda done, total: progress.append((done, total)))
    assert started == [1]  # the pool ran
    assert report.summary() == "30 created, 0 revised, 0 unchanged, 28 new media file(s)"
    assert report.measuring_deferred and not alone_report_deferred(alone)
    assert dump(shared) == {**dump(alone), "media_fact": [], "media_signature": []}  # measured later...
    assert measure_pending(shared) == 28
    assert dump(shared) == dump(alone)  # ...to the same facts and signatures
    assert progress[-1] == (40, 40) and [d for d, _ in progress] == sorted(d for d, _ in progress)

    # a second import with changed lines and a lost store file: revisions and the restored file, both ways
    changed = rows(30)
    changed[4]["question"] = "Which feeling does the speaker show?"
    changed.append(item_row("i999", group="g0", image="media/g0.jpg"))
    path = write_items(tmp_path / "in", changed)
    for ws in (alone, shared):
        lost = next(p for p in ws.media.root.rglob("*.wav"))
        lost.unlink()
    assert import_items(shared, path).summary() == "1 created, 1 revised, 29 unchanged, 1 new media file(s)"
    assert measure_pending(shared) == 1
    monkeypatch.setattr(workers, "MIN_PARALLEL", 10**6)
    assert import_items(alone, path).summary() == "1 created, 1 revised, 29 unchanged, 1 new media file(s)"
    assert started == [1, 1, 1]  # the first import, measuring its 28 files, the second import
    assert dump(shared) == dump(alone)
    assert len(dump(shared)["files"]) == 29


def test_a_bad_medium_in_a_pooled_import_names_its_line_and_leaves_nothing(
    workspace: Workspace, tmp_path: Path, pooled: list[int]
) -> None:
    workspace.add_person("ann1", ["author"])
    folder = tmp_path / "in"
    lines = rows(24)
    path = write_items(folder, lines)
    (folder / "media" / "i017.wav").write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt garbage")
    before = counted(workspace)
    with pytest.raises(ValidationFailed) as exc:
        import_items(workspace, path)
    assert pooled == [2]
    assert [str(p) for p in exc.value.problems] == [
        f"{path}:18: audio: i017.wav: not decodable audio (Error in WAV/W64/RF64 file. Malformed 'fmt ' chunk.); export it again as WAV or FLAC"
    ]
    assert counted(workspace) == before and leftovers(workspace) == []


def test_pooled_and_one_process_imports_refuse_with_the_same_problems_in_line_order(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace.add_person("ann1", ["author"])
    folder = tmp_path / "in"
    lines = rows(24)
    lines[2]["audio"] = "media/missing.wav"
    lines[5]["audio"] = "media/g0.jpg"  # an image where a clip belongs, after a line read it as an image
    lines[9]["image"] = "media/i012.wav"  # a clip where an image belongs, before a line reads it as a clip
    lines[11]["id"] = "i001"
    lines[13]["answer"] = "Z"
    make_tone(folder / "media" / "i012.wav")  # (else write_items would make it an image for line 10)
    path = write_items(folder, lines)
    (folder / "media" / "missing.wav").unlink()
    (folder / "media" / "g6.jpg").write_bytes(b"\xff\xd8\xff truncated")

    def refused() -> list[str]:
        with pytest.raises(ValidationFailed) as exc:
            import_items(workspace, path)
        assert leftovers(workspace) == []
        return [str(p) for p in exc.value.problems]

    monkeypatch.setattr(workers, "cpus", lambda: 1)
    alone = refused()
    monkeypatch.setattr(workers, "MIN_PARALLEL", 4)
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    assert refused() == alone
    assert [p.split(": ")[0] for p in alone] == [
        f"{path}:3",
        f"{path}:6",
        f"{path}:10",
        f"{path}:12",
        f"{path}:14",
        f"{path}:19",
        f"{path}:20",
        f"{path}:21",
    ]
    assert "g0.jpg: is image, but the field expects audio" in alone[1]
    assert "i012.wav: not a readable image" in alone[2]  # and line 13 reads it as the clip it is


def test_an_interrupted_pooled_import_stops_its_workers_and_leaves_nothing(
    workspace: Workspace, tmp_path: Path, pooled: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace.add_person("ann1", ["author"])
    path = write_items(tmp_path / "in", rows(24))
    before = counted(workspace)

    def interrupted(self, media, results):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(item_media.MediaCache, "_found", interrupted)
    with pytest.raises(KeyboardInterrupt):
        import_items(workspace, path)
    assert pooled == [2]
    assert counted(workspace) == before and leftovers(workspace) == []
    monkeypatch.undo()
    assert import_items(workspace, path).summary().startswith("24 created")


def test_a_few_large_files_are_read_in_the_pool_too(
    make_workspace: Callable[[str], Workspace], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer files than MIN_PARALLEL, but enough bytes to be worth measuring in parallel: the pool starts."""
    path = write_items(tmp_path / "in", rows(6))
    alone = fresh(make_workspace, "alone")
    import_items(alone, path)
    started: list[int] = []
    real_open = workers.Runner._open
    monkeypatch.setattr(workers.Runner, "_open", lambda self: started.append(1) or real_open(self))
    monkeypatch.setattr(workers, "cpus", lambda: 2)
    files = sorted((tmp_path / "in" / "media").iterdir())
    monkeypatch.setattr(workers, "MIN_PARALLEL_WEIGHT", sum(p.stat().st_size for p in files[:3]))
    shared = fresh(make_workspace, "shared")
    assert import_items(shared, path).summary().startswith("6 created")
    assert started == [1]
    assert measure_pending(shared) > 0  # the pooled import left measuring to this step
    assert dump(shared) == dump(alone)
    started.clear()
    monkeypatch.setattr(workers, "MIN_PARALLEL_WEIGHT", sum(p.stat().st_size for p in files) + 1)
    import_items(fresh(make_workspace, "small"), path)
    assert started == []  # below both thresholds: one process
