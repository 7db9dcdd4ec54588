"""Every kind's release loads where users load data (issue 43): each record set of its croissant.json reads
whole in mlcroissant, and its Parquet files load with Hugging Face `datasets`, the media columns as
``datasets.Image()`` / ``datasets.Audio()`` decoding the released files, their paths kept. Offline: no hub is
asked (HF_DATASETS_OFFLINE, HF_HUB_OFFLINE) and the cache is a temporary folder."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from exports.verify import verify_release
from tests.conftest import DemoTemplates, require_module

INSTALL_TORCHCODEC = (
    "pip install --no-deps torchcodec==0.13.0 beside torch 2.13.0, with FFmpeg (apt-get install ffmpeg); "
    "bash .ci/setup.d/40-checker.sh does this"
)
"""datasets' Audio feature decodes with torchcodec, which must match the installed torch."""
KINDS = ("mcq", "story", "judge")
PARQUET = {
    "mcq": [("data/items.parquet", "data/items.jsonl", {"image": "image", "audio": "audio"})],
    "story": [
        ("data/transitions.parquet", "data/transitions.jsonl", {"current_image": "image", "next_image": "image"})
    ],
    "judge": [
        (
            "data/tasks.parquet",
            "data/tasks.jsonl",
            {"input_image": "image", "input_audio": "audio", "input_video": "video"},
        ),
        ("data/responses.parquet", "data/responses.jsonl", {"image": "image", "audio": "audio", "video": "video"}),
    ],
}
"""Per kind, its Parquet files: (file, the JSON Lines file of the same records, media column -> medium)."""


@pytest.fixture
def releases(demo_templates: DemoTemplates) -> dict[str, Path]:
    """Each kind's demo release, in the demo templates; tests only read them (or copy one)."""
    built = {}
    for kind in KINDS:
        template, _db = demo_templates[kind]["sqlite"]
        (built[kind],) = (template / "releases").iterdir()
    return built


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`datasets` with no network and a cache of its own; the module, imported."""
    for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    datasets = require_module("datasets", "pip install -e '.[release-check]'")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True, raising=False)
    return datasets


def lines(folder: Path, rel: str) -> dict[str, dict[str, Any]]:
    rows = [json.loads(x) for x in (folder / rel).read_text(encoding="utf-8").splitlines() if x.strip()]
    return {r["id"]: r for r in rows}


def flat(kind: str, rows: dict[str, dict[str, Any]], rel: str) -> dict[str, dict[str, Any]]:
    """The JSON Lines records as the Parquet file flattens them (a judge task's inputs, a response's output)."""
    if kind != "judge":
        return rows
    from exports.judge_parquet import flat_response, flat_task

    flatten = flat_task if rel == "data/tasks.jsonl" else flat_response
    return {i: flatten(r) for i, r in rows.items()}


def load(datasets: Any, release: Path, rel: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The two lines of docs/releases.md, run in the release folder (media paths are relative to it)."""
    monkeypatch.chdir(release)
    return datasets.load_dataset("parquet", data_files=rel, split="train", cache_dir=str(tmp_path / "hf"))


@pytest.mark.parametrize("kind", KINDS)
def test_every_record_set_of_the_croissant_file_loads_whole(releases: dict[str, Path], kind: str) -> None:
    mlc = require_module("mlcroissant", "pip install -e '.[release-check]'")
    logging.getLogger("absl").setLevel(logging.ERROR)
    release = releases[kind]
    dataset = mlc.Dataset(jsonld=release / "croissant.json")
    assert not dataset.metadata.issues.errors
    counts = {}
    for record_set in dataset.metadata.record_sets:
        try:
            counts[record_set.name] = sum(1 for _ in dataset.records(record_set=record_set.uuid))
        except Exception as exc:  # mlcroissant wraps every failure in its own GenerationError
            pytest.fail(f"{kind}: record set {record_set.name} does not load: {exc}")
    assert any(name.startswith("admission-") for name in counts) or kind == "judge"
    for parquet, jsonl, _ in PARQUET[kind]:  # the judge's tasks and responses too (issue 43)
        (name,) = [rs.name for rs in dataset.metadata.record_sets if parquet in (rs.description or "")]
        assert counts[name] == len(lines(release, jsonl)) > 0


@pytest.mark.parametrize(
    ("kind", "file"), [("mcq", 0), ("story", 0), ("judge", 0), ("judge", 1)], ids=["mcq", "story", "tasks", "responses"]
)
def test_a_media_field_reads_as_the_released_path(releases: dict[str, Path], kind: str, file: int) -> None:
    mlc = require_module("mlcroissant", "pip install -e '.[release-check]'")
    release = releases[kind]
    parquet, jsonl, media = PARQUET[kind][file]
    shipped = flat(kind, lines(release, jsonl), jsonl)
    document = json.loads((release / "croissant.json").read_text())
    (record_set,) = [rs for rs in document["recordSet"] if rs["field"][0]["source"]["fileObject"]["@id"] == parquet]
    name = record_set["name"]
    declared = {f["name"] for f in record_set["field"]}
    read = 0
    for record in mlc.Dataset(jsonld=release / "croissant.json").records(name):
        item = shipped[record[f"{name}/id"].decode()]
        for column in (c for c in media if c in declared):
            value = record[f"{name}/{column}"]
            assert (value.decode() if isinstance(value, bytes) else value) == item[column], (column, item["id"])
            read += item[column] is not None
    assert read > 0
    texts = [f for f in record_set["field"] if f["dataType"] == "sc:Text" and "JSON object" in f["description"]]
    if kind == "story":  # the nested columns are JSON text, parsed back to the JSON Lines values
        record = next(iter(mlc.Dataset(jsonld=release / "croissant.json").records(name)))
        item = shipped[record["transitions/id"].decode()]
        for field in texts:
            assert json.loads(record[field["@id"]].decode()) == item[field["name"]]
        assert {f["name"] for f in texts} == {"book_meta", "conditions", "speech", "provenance", "origin"}


@pytest.mark.parametrize("kind", KINDS)
def test_datasets_decodes_each_image_from_the_released_file(
    releases: dict[str, Path], kind: str, offline: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PIL import Image

    datasets = offline
    release = releases[kind]
    listed = {f["path"] for f in json.loads((release / "manifest.json").read_text())["files"]}
    decoded = 0
    for parquet, jsonl, media in PARQUET[kind]:
        ds = load(datasets, release, parquet, tmp_path / parquet.replace("/", "-"), monkeypatch)
        shipped = flat(kind, lines(release, jsonl), jsonl)
        assert ds.num_rows == len(shipped) and set(ds["id"]) == set(shipped)
        for column in (c for c, medium in media.items() if medium == "image"):
            assert ds.features[column] == datasets.Image()
            paths, ids = ds.cast_column(column, datasets.Image(decode=False))[column], ds["id"]
            for n, stored in enumerate(paths):
                expected = shipped[ids[n]][column]
                assert (stored or {}).get("path") == expected and (stored is None or stored["bytes"] is None)
            n = next(n for n, stored in enumerate(paths) if stored is not None)
            # only this column: a row decodes every medium, and audio needs torchcodec, which a bare machine lacks
            image, path = ds.select_columns([column])[n][column], paths[n]["path"]
            assert path in listed and path.startswith("media/")
            with Image.open(release / path) as released:
                assert image.size == released.size and image.format == released.format
            decoded += 1
    assert decoded >= 1


@pytest.mark.parametrize("kind", ["mcq", "judge"])
def test_datasets_decodes_each_audio_clip_from_the_released_file(
    releases: dict[str, Path], kind: str, offline: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import soundfile

    datasets = offline
    require_module("torchcodec.decoders", INSTALL_TORCHCODEC)
    release = releases[kind]
    for parquet, jsonl, media in PARQUET[kind]:
        ds = load(datasets, release, parquet, tmp_path / parquet.replace("/", "-"), monkeypatch)
        shipped = flat(kind, lines(release, jsonl), jsonl)
        for column in (c for c, medium in media.items() if medium == "audio"):
            assert ds.features[column] == datasets.Audio()
            paths = ds.cast_column(column, datasets.Audio(decode=False))[column]
            n = next(n for n, stored in enumerate(paths) if stored is not None)
            path = paths[n]["path"]
            assert path == shipped[ds[n]["id"]][column] and paths[n]["bytes"] is None
            clip = ds[n][column]
            info = soundfile.info(release / path)
            assert clip["sampling_rate"] == info.samplerate
            assert clip["array"].shape[-1] == info.frames


def test_datasets_decodes_each_video_from_the_released_file(
    releases: dict[str, Path], offline: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge task's input video and a response's output video load as ``datasets.Video()`` and decode (with
    torchcodec) to the released file's frames."""
    import av

    datasets = offline
    require_module("torchcodec.decoders", INSTALL_TORCHCODEC)
    release = releases["judge"]
    decoded = 0
    for parquet, jsonl, media in PARQUET["judge"]:
        ds = load(datasets, release, parquet, tmp_path / parquet.replace("/", "-"), monkeypatch)
        shipped = flat("judge", lines(release, jsonl), jsonl)
        for column in (c for c, medium in media.items() if medium == "video"):
            assert ds.features[column] == datasets.Video()
            paths, ids = ds.cast_column(column, datasets.Video(decode=False))[column], ds["id"]
            assert [(p or {}).get("path") for p in paths] == [shipped[i][column] for i in ids]
            n = next(n for n, stored in enumerate(paths) if stored is not None)
            video = ds.select_columns([column])[n][column]
            with av.open(str(release / paths[n]["path"])) as container:
                stream = container.streams.video[0]
                frames = sum(1 for _ in container.decode(stream))
                width, height = stream.codec_context.width, stream.codec_context.height
            assert (video.metadata.width, video.metadata.height) == (width, height)
            assert len(video) == frames and tuple(video[0].shape[-2:]) == (height, width)
            decoded += 1
    assert decoded == 2, "an input video and an output video"


def test_the_card_declares_the_media_features_and_the_folder_loads_through_it(
    releases: dict[str, Path], offline: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = offline
    release = releases["mcq"]
    monkeypatch.chdir(release)
    ds = datasets.load_dataset(str(release), split="test", cache_dir=str(tmp_path / "hf"))
    assert ds.features["image"] == datasets.Image() and ds.features["audio"] == datasets.Audio()
    assert ds.info.features == ds.features
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "  - name: image\n    dtype: image\n" in card and "  - name: audio\n    dtype: audio\n" in card


@pytest.mark.parametrize("kind", KINDS)
def test_each_parquet_file_is_a_function_of_its_json_lines_file(releases: dict[str, Path], kind: str) -> None:
    """Rebuilding gives the same bytes: each Parquet file is re-derived from the JSON Lines file it mirrors."""
    from exports.build import _parquet_bytes
    from exports.judge_parquet import parquet_files
    from exports.release_parquet import records_parquet
    from exports.story_release import PARQUET_COLUMNS

    release = releases[kind]
    for parquet, jsonl, _ in PARQUET[kind]:
        data = (release / jsonl).read_bytes()
        if kind == "mcq":
            import pyarrow.parquet as pq

            again = _parquet_bytes(data, tuple(pq.read_schema(release / parquet).names))
        elif kind == "story":
            again = records_parquet(lines(release, jsonl).values(), PARQUET_COLUMNS, parquet)
        else:
            names = ("data/tasks.jsonl", "data/responses.jsonl")
            again = parquet_files({n: (release / n).read_bytes() for n in names})[parquet]
        assert again == (release / parquet).read_bytes(), parquet


def test_verify_finds_a_parquet_file_that_differs_from_its_json_lines_file(
    releases: dict[str, Path], tmp_path: Path
) -> None:
    from exports.release_parquet import records_parquet
    from exports.story_release import PARQUET_COLUMNS

    release = Path(shutil.copytree(releases["story"], tmp_path / "r"))
    rows = list(lines(release, "data/transitions.jsonl").values())
    rows[0]["next_image"], rows[0]["conditions"]["scene"] = rows[0]["current_image"], "a forged scene"
    data = records_parquet(rows, PARQUET_COLUMNS, "data/transitions.parquet")
    (release / "data/transitions.parquet").write_bytes(data)
    manifest = json.loads((release / "manifest.json").read_text())
    for entry in manifest["files"]:  # re-hashed, as a careful forger would
        if entry["path"] == "data/transitions.parquet":
            entry["sha256"], entry["size"] = hashlib.sha256(data).hexdigest(), len(data)
    (release / "manifest.json").write_text(json.dumps(manifest))
    found = {(m.kind, m.path, m.detail) for m in verify_release(release).mismatches}
    detail = f"its items differ from data/transitions.jsonl: {rows[0]['id']}"
    assert ("invalid", "data/transitions.parquet", detail) in found
