"""Issue 40, "strict at every door", through `curate` as users meet it: NaN, Infinity and deep nesting in a line,
a FIFO, a device or a folder given as a file, decompression bombs among the media (images, audio, video), and
licences that are not open. Each is one named line on standard error (FILE:LINE: field: problem, or FILE: page N),
exit 2, never a traceback, and a refused run stores nothing, on both databases."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from curation.config import CONFIG_NAME, Settings
from curation.screening.tables import Candidate
from curation.tables import Asset, Item
from curation.workspace import Workspace
from devsupport.media_factory import item_row, make_image, make_tone, write_items
from omnicurate.cli.main import app

runner = CliRunner()


def curate(ws: Workspace, *args: str) -> Any:
    result = runner.invoke(app, ["-w", str(ws.root), *args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def refused(ws: Workspace, *args: str) -> list[str]:
    """The problem lines of a refused command (exit 2), one per problem."""
    result = curate(ws, *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    summary = next((n for n, line in enumerate(lines) if line.startswith("error:")), len(lines))
    return [line for line in lines[:summary] if line]  # the summary after them may wrap


def stored(ws: Workspace, table: Any) -> int:
    with ws.session() as s:
        return int(s.execute(select(func.count()).select_from(table)).scalar_one())


def configure(ws: Workspace, **media: Any) -> None:
    """Write ``[media]`` settings into the workspace's curate.toml (what the next command reads)."""
    path = ws.root / CONFIG_NAME
    settings = Settings.load(path)
    for name, value in media.items():
        setattr(settings.media, name, value)
    settings.save(path)


def png_bomb(path: Path, width: int = 60_000, height: int = 60_000) -> Path:
    """A PNG whose header says ``width`` x ``height`` (60000 x 60000: 3.6 gigapixels, 10.8 GB once decoded) in a
    few dozen bytes: only its header may ever be read."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b"")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + body)
    return path


def items_file(folder: Path, rows: list[dict[str, Any]]) -> Path:
    return write_items(folder, rows)


@pytest.fixture
def author(workspace: Workspace) -> Workspace:
    workspace.add_person("ann1", ["author"])
    return workspace


# ----- numbers and nesting (the shared reader) ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("token", "shown"),
    [("NaN", "NaN is not a number"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("1e400", "Infinity")],
)
def test_nan_and_infinity_in_a_provenance_extra_are_refused_not_stored_as_null(
    author: Workspace, tmp_path: Path, token: str, shown: str
) -> None:
    path = items_file(tmp_path / "in", [item_row("a1"), item_row("a2")])
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"license": "CC0-1.0"}', f'"license": "CC0-1.0", "note": {token}}}', 1)
    path.write_text("\n".join(lines) + "\n")
    [problem] = refused(author, "import", "items", str(path))
    assert problem.startswith(f"{path}:2: provenance.image.note: {shown}") and "not a number JSON allows" in problem
    assert stored(author, Item) == 0 and stored(author, Asset) == 0


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_a_provenance_extra_nested_too_deeply_is_refused_by_line(author: Workspace, tmp_path: Path) -> None:
    """The line is level 1, provenance 2, image 3, the extra 4: 29 levels inside the extra reach the limit of 32
    (stored, and exported again, on both databases); one more, or 256 (which crashed the serializer), is refused."""
    rows = [item_row(f"a{n}") for n in range(3)]
    for row, levels in zip(rows, (29, 30, 256), strict=True):
        row["provenance"]["image"]["extra"] = nested(levels)
    path = items_file(tmp_path / "in", rows)
    problems = refused(author, "import", "items", str(path))
    deep = "provenance.image.extra" + ".a" * 29  # the first level past the limit
    assert problems == [
        f"{path}:2: {deep}: nested too deeply (at most 32 levels); flatten it",
        f"{path}:3: {deep}: nested too deeply (at most 32 levels); flatten it",
    ]
    assert stored(author, Item) == 0
    path.write_text(path.read_text().splitlines()[0] + "\n")
    assert curate(author, "import", "items", str(path)).exit_code == 0
    out = tmp_path / "out.jsonl"
    assert curate(author, "export", "items", str(out)).exit_code == 0
    assert json.loads(out.read_text())["provenance"]["image"]["extra"] == nested(29)


def test_an_integer_beyond_64_bits_and_a_100000_deep_line_are_named(author: Workspace, tmp_path: Path) -> None:
    path = items_file(tmp_path / "in", [item_row("a1")])
    good = path.read_text().strip()
    huge = good.replace('"license": "CC0-1.0"}', f'"license": "CC0-1.0", "n": {2**64}}}', 1)
    path.write_text(f"{good}\n{huge}\n{'[' * 100_000}{']' * 100_000}\n")
    assert refused(author, "import", "items", str(path)) == [
        f"{path}:2: provenance.image.n: an integer of 20 digits is too large: integers go from "
        "-9,223,372,036,854,775,807 to 9,223,372,036,854,775,807",
        f"{path}:3: invalid JSON: nested too deeply (at most 32 levels); flatten it",
    ]
    assert stored(author, Item) == 0


# ----- what is not a regular file -----------------------------------------------------------------------------
@pytest.fixture
def odd_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # nobody writes to it: reading it would wait for ever
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    return {
        "fifo": (fifo, "is a FIFO (a named pipe), not a regular file"),
        "device": (Path("/dev/zero"), "is a device, not a regular file"),
        "folder": (folder, "is a folder, not a file"),
    }


@pytest.mark.parametrize("odd", ["fifo", "device", "folder"])
def test_a_fifo_a_device_or_a_folder_is_named_as_what_it_is(
    workspace: Workspace, odd_files: dict[str, tuple[Path, str]], odd: str
) -> None:
    path, what = odd_files[odd]
    for args, where in [
        (("import", "items", str(path)), f"{path}: {what}"),
        (("import", "reviews", str(path)), f"{path}: {what}"),
        (("import", "candidates", str(path)), f"{path}: {what}"),
        (("check", "--probe", f"replay:{path}"), f"{path}: --probe replay file: {what}"),
        (("judge", "draft", "--backend", f"replay:{path}"), f"{path}: --backend replay file: {what}"),
    ]:
        problems = refused(workspace, *args)
        assert any(p.startswith(where) for p in problems), (args, problems)
        assert not any("does not exist" in p for p in problems)
    if odd != "folder":  # a folder is where query tables and books are looked for
        assert refused(workspace, "judge", "import", "queries", str(path)) == [f"{path}: {what}; give the file itself"]
        assert refused(workspace, "import", "books", str(path)) == [
            f"{path}: {what}; give an .epub file or a folder with book.json"
        ]


def test_a_fifo_named_as_an_items_medium_is_named(author: Workspace, tmp_path: Path) -> None:
    path = items_file(tmp_path / "in", [item_row("a1")])
    (tmp_path / "in" / "media" / "a1.wav").unlink()
    os.mkfifo(tmp_path / "in" / "media" / "a1.wav")
    assert refused(author, "import", "items", str(path)) == [
        f"{path}:1: audio: media/a1.wav: is a FIFO (a named pipe), not a regular file"
    ]


# ----- media bombs ------------------------------------------------------------------------------------------
BOMB = "the image is 60,000 × 60,000 pixels (3,600 megapixels), more than the 40 megapixels allowed"


def candidates_file(folder: Path, images: tuple[str, str], license: str = "CC-BY-4.0") -> Path:
    for name in images:
        if not (folder / name).exists():
            make_image(folder / name, size=(320, 240))
    line = {
        "id": "b1-p00",
        "book": "b1",
        "page": 0,
        "title": "T",
        "source": {"collection": "c", "license": license},
        "current": {"image": images[0], "text": "Kito woke early and ran down to the river."},
        "next": {"image": images[1], "text": "“Where is my kite?” asked Kito, looking at the sky."},
    }
    path = folder / "candidates.jsonl"
    path.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def test_a_png_bomb_is_refused_at_every_intake_by_its_header(author: Workspace, tmp_path: Path) -> None:
    png_bomb(tmp_path / "in" / "bomb.png")
    candidates = candidates_file(tmp_path / "in", ("a.jpg", "bomb.png"))
    [problem] = refused(author, "import", "candidates", str(candidates))
    assert problem.startswith(f"{candidates}:1: next.image: bomb.png: {BOMB} ([media] max_image_pixels")
    assert stored(author, Candidate) == 0

    items = items_file(tmp_path / "in", [item_row("a1", image="bomb.png")])
    [problem] = refused(author, "import", "items", str(items))
    assert problem.startswith(f"{items}:1: image: bomb.png: {BOMB}")
    assert stored(author, Item) == 0 and stored(author, Asset) == 0

    book = tmp_path / "book"
    make_image(book / "a.jpg")
    png_bomb(book / "b.png")
    pages = [{"image": "a.jpg", "text": "One."}, {"image": "b.png", "text": "Two."}]
    (book / "book.json").write_text(json.dumps({"title": "B", "license": "CC-BY-4.0", "pages": pages}))
    [problem] = refused(author, "import", "books", str(book))
    assert problem.startswith(f"{book}: page 2: image: b.png: {BOMB}")
    assert stored(author, Candidate) == 0 and not list((author.root / "books").rglob("*.png"))


def test_screen_meets_a_bomb_swapped_in_after_import_as_an_unreadable_image(
    workspace: Workspace, tmp_path: Path
) -> None:
    """A candidate's images stay where they were imported from: one replaced by a bomb since is dropped
    (``image:unreadable``), never decoded, on every run; Pillow's own bomb refusal never surfaces."""
    candidates = candidates_file(tmp_path / "in", ("a.jpg", "b.jpg"))
    assert curate(workspace, "import", "candidates", str(candidates)).exit_code == 0
    settings = Settings.load(workspace.root / CONFIG_NAME)
    settings.screen.steps = ["image"]
    settings.save(workspace.root / CONFIG_NAME)
    png_bomb(tmp_path / "in" / "b.jpg")
    for _ in range(2):
        result = curate(workspace, "screen", "--json")
        assert result.exit_code == 0, result.output
        [step] = json.loads(result.stdout)["steps"]
        assert step["step"] == "image" and step["reasons"] == {"image:unreadable": 1}


def test_pillows_bomb_warning_never_reaches_the_user(tmp_path: Path) -> None:
    """10000 x 10000 is over the workspace's limit but under Pillow's hard one: Pillow would warn (a
    DecompressionBombWarning on standard error); the limit refuses it by name first, and the warning is silenced."""
    import warnings

    from curation.errors import MediaError
    from curation.media import open_image
    from curation.screening.rules import probe_image

    path = png_bomb(tmp_path / "ten.png", 10_000, 10_000)
    with warnings.catch_warnings(record=True) as shown:
        with pytest.raises(MediaError, match=r"ten.png: the image is 10,000 × 10,000 pixels \(100 megapixels\)"):
            open_image(path, "ten.png", 40_000_000)
        assert probe_image(str(png_bomb(tmp_path / "big.png"))).problem.startswith("too many pixels")
        assert probe_image(str(path)).problem.startswith("undecodable")  # truncated: only its header is real
    assert not [w for w in shown if "decompression bomb" in str(w.message)]


def test_audio_longer_than_the_limit_is_refused_from_its_header(author: Workspace, tmp_path: Path) -> None:
    configure(author, max_audio_seconds=1.5)
    path = items_file(tmp_path / "in", [item_row("a1")])
    make_tone(tmp_path / "in" / "media" / "a1.wav", seconds=2.0)
    [problem] = refused(author, "import", "items", str(path))
    assert problem == (
        f"{path}:1: audio: a1.wav: the recording is 2.0 s long, more than the 1.5 s allowed ([media] "
        "max_audio_seconds; a possible decompression bomb); trim it and add it again"
    )
    assert stored(author, Item) == 0 and stored(author, Asset) == 0


def make_clip(path: Path, frames: int, size: tuple[int, int] = (64, 48)) -> Path:
    import av
    import numpy as np

    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        for n in range(frames):
            picture = np.full((size[1], size[0], 3), (n * 20) % 256, dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def test_a_video_with_too_many_or_too_large_frames_is_refused(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_person("curator", ["maintainer"])
    make_clip(tmp_path / "clip.mp4", frames=12)
    task = {"id": "t1", "instruction": "Describe it.", "inputs": {"video": "clip.mp4"}, "output": "text"}
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({**task, "source": "S", "license": "CC-BY-4.0"}) + "\n")
    configure(workspace, max_video_frames=10)
    [problem] = refused(workspace, "judge", "import", "tasks", str(tasks), "--by", "curator")
    assert (
        problem.startswith(f"{tasks}:1: inputs.video: clip.mp4: the video has 1")
        and "[media] max_video_frames" in problem
    )
    configure(workspace, max_video_frames=100, max_image_pixels=1000)
    [problem] = refused(workspace, "judge", "import", "tasks", str(tasks), "--by", "curator")
    assert problem.startswith(f"{tasks}:1: inputs.video: clip.mp4: each frame is 64 × 48 pixels")
    configure(workspace, max_image_pixels=40_000_000)
    assert curate(workspace, "judge", "import", "tasks", str(tasks), "--by", "curator").exit_code == 0


# ----- licences -------------------------------------------------------------------------------------------------
ACCEPTS = "the workspace accepts: CC0-1.0, PD, CC-PDDC"


def test_items_whose_media_are_not_openly_licensed_are_refused(author: Workspace, tmp_path: Path) -> None:
    closed = item_row("a2")
    closed["provenance"]["audio"]["license"] = "All rights reserved"
    path = items_file(tmp_path / "in", [item_row("a1"), closed])
    [problem] = refused(author, "import", "items", str(path))
    assert problem.startswith(f'{path}:2: provenance.audio.license: "All rights reserved" is not an open licence; ')
    assert ACCEPTS in problem and "[licences] add in curate.toml" in problem
    assert stored(author, Item) == 0 and stored(author, Asset) == 0
    settings = Settings.load(author.root / CONFIG_NAME)
    settings.licences.add = ["All rights reserved"]  # a workspace that never releases may take anything in
    settings.save(author.root / CONFIG_NAME)
    assert curate(author, "import", "items", str(path)).exit_code == 0 and stored(author, Item) == 2


def test_candidates_and_books_under_closed_licences_are_refused_and_queries_held(
    workspace: Workspace, tmp_path: Path
) -> None:
    queries = tmp_path / "queries.jsonl"
    good = {"id": "q1", "instruction": "Sing.", "output": "audio", "source": "S", "license": "MIT"}
    queries.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "q2", "license": "proprietary"}) + "\n")
    imported = curate(workspace, "judge", "import", "queries", str(queries), "--json")  # candidates: held by name
    assert json.loads(imported.stdout)["held_for_licence"] == [{"id": "q2", "license": "proprietary"}]
    listed = {q["id"]: q for q in json.loads(curate(workspace, "judge", "queries", "list", "--json").stdout)}
    assert (listed["q2"]["state"], listed["q2"]["reasons"][0]) == ("held", "licence:unknown:proprietary")

    candidates = candidates_file(tmp_path / "in", ("a.jpg", "b.jpg"), license="CC-BY-NC-4.0")
    [problem] = refused(workspace, "import", "candidates", str(candidates))
    assert problem.startswith(f'{candidates}:1: source.license: "CC-BY-NC-4.0" is not an open licence')
    assert stored(workspace, Candidate) == 0

    book = tmp_path / "book"
    for name in ("a.jpg", "b.jpg"):
        make_image(book / name)
    pages = [{"image": "a.jpg", "text": "One."}, {"image": "b.jpg", "text": "Two."}]
    (book / "book.json").write_text(json.dumps({"title": "B", "license": "All rights reserved", "pages": pages}))
    [problem] = refused(workspace, "import", "books", str(book))
    assert problem.startswith(f'{book}: license: "All rights reserved" is not an open licence')
    assert stored(workspace, Candidate) == 0

    settings = Settings.load(workspace.root / CONFIG_NAME)
    settings.licences.accept = ["CC-BY-NC-4.0"]  # replaces the default list: CC-BY-4.0 is no longer taken in
    settings.save(workspace.root / CONFIG_NAME)
    assert curate(workspace, "import", "candidates", str(candidates)).exit_code == 0
    assert stored(workspace, Candidate) == 1
    listed = {q["id"]: q for q in json.loads(curate(workspace, "judge", "queries", "list", "--json").stdout)}
    assert listed["q1"]["reasons"] == ["licence:closed:MIT"], "held by the workspace's list as it is now"
