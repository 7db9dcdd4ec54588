"""Media paths of a JSONL (curation.media.MediaPaths): each folder is resolved once, and every answer is the
one resolving the whole path gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from curation.errors import MediaError, ValidationFailed
from curation.items import import_items
from curation.media import MediaPaths
from curation.workspace import Workspace
from tests.media_factory import item_row, make_tone, write_items


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    base = tmp_path / "in"
    make_tone(base / "media" / "sub" / "b.wav")
    make_tone(base / "media" / "a.wav")
    make_tone(tmp_path / "outside.wav")
    os.symlink(tmp_path / "outside.wav", base / "media" / "out.wav")
    os.symlink(base / "media" / "a.wav", base / "media" / "in.wav")
    os.symlink(tmp_path, base / "media" / "up")
    os.symlink(base / "media" / "loop2.wav", base / "media" / "loop1.wav")
    os.symlink(base / "media" / "loop1.wav", base / "media" / "loop2.wav")
    return base


@pytest.mark.parametrize(
    ("relative", "found"),
    [
        ("media/a.wav", "media/a.wav"),
        ("media//./a.wav", "media/a.wav"),
        ("media/sub/../a.wav", "media/a.wav"),
        ("media/in.wav", "media/a.wav"),  # a link inside the folder is followed
        ("media/up/in/media/sub/b.wav", "media/sub/b.wav"),  # out through a linked folder and back in
        ("media/out.wav", "path leaves the JSONL file's folder"),
        ("media/up/outside.wav", "path leaves the JSONL file's folder"),
        ("../outside.wav", "path leaves the JSONL file's folder"),
        ("/etc/passwd", "media paths must be relative"),
        ("media/sub", "is a folder, not a media file"),
        ("media/..", "is a folder, not a media file"),
        ("media/missing.wav", "file not found"),
        ("nowhere/x.wav", "file not found"),
        ("media/loop1.wav", "file not found"),  # a symlink loop is named, not a crash
    ],
)
@pytest.mark.parametrize("listed_from", [MediaPaths.LISTED_FROM, 1])  # asked file by file, or from a listing
def test_each_path_resolves_as_the_whole_path_does(
    folder: Path, relative: str, found: str, listed_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MediaPaths, "LISTED_FROM", listed_from)
    (folder / "media" / "fifo.wav").parent.mkdir(exist_ok=True)
    os.mkfifo(folder / "media" / "fifo.wav")
    paths = MediaPaths(folder)
    with pytest.raises(MediaError, match=r"is a FIFO \(a named pipe\), not a regular file"):  # named, listed or asked
        paths.resolve("media/fifo.wav")
    for _ in range(2):  # the second time from the folder already resolved
        if found.startswith("media/"):
            assert paths.resolve(relative) == (folder / found).resolve()
        else:
            with pytest.raises(MediaError, match=found):
                paths.resolve(relative)


def test_a_symlink_loop_in_an_import_names_its_line_and_stores_nothing(workspace: Workspace, folder: Path) -> None:
    workspace.add_person("ann1", ["author"])
    path = write_items(folder, [item_row("a", audio="media/a.wav"), item_row("b", audio="media/loop.wav")])
    (folder / "media" / "loop.wav").unlink()  # write_items made a clip there: now a loop of two links
    os.symlink(folder / "media" / "loop-back.wav", folder / "media" / "loop.wav")
    os.symlink(folder / "media" / "loop.wav", folder / "media" / "loop-back.wav")
    with pytest.raises(ValidationFailed) as exc:
        import_items(workspace, path)
    assert [str(p) for p in exc.value.problems] == [f"{path}:2: audio: media/loop.wav: file not found"]
    assert not [p for p in workspace.media.root.rglob("*") if p.is_file()]
