"""The release's ``image_note`` and ``audio_note`` columns: the notes as typed, null where absent, declared in the
card and in Croissant, and loadable with `datasets` and `mlcroissant`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from checker.reproduce import replay_verdicts
from curation.kinds.mcq import ITEM_COLUMNS
from curation.workspace import Workspace
from exports.build import build_release
from exports.reproduce import reproduce_release
from exports.verify import verify_release
from tests.exports.test_interop import require
from tests.exports.workspace_factory import fill_workspace, group_rows

AUDIO_EN = 'A woman, flat and slow: "Sure, thanks a lot." A sigh; <i>dishes</i> clatter & a tap runs.'
IMAGE_ZH = "厨房餐桌旁，一位女士用两根手指把一盘烤焦的吐司推开。"
NOTES = {
    "g1-a": {"audio": AUDIO_EN, "image": "A kitchen table with burnt toast."},
    "g2-b": {"image": IMAGE_ZH},
}


@pytest.fixture
def release(make_workspace: Callable[[str], Workspace], tmp_path: Path) -> Path:
    rows = group_rows("g1") + group_rows("g2", options=3, language="zh")
    for row in rows:
        if row["id"] in NOTES:
            row["notes"] = NOTES[row["id"]]
    ws = make_workspace("ws")
    fill_workspace(ws, tmp_path / "input", rows)
    build_release(ws, "1.0.0", out=tmp_path / "r")
    return tmp_path / "r"


def records(release: Path) -> dict[str, dict[str, object]]:
    lines = (release / "data" / "items.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["id"]: row for row in map(json.loads, lines)}


def test_the_notes_are_released_as_typed_in_their_own_columns(release: Path) -> None:
    rows = records(release)
    assert sorted(rows["g1-a"]) == sorted(ITEM_COLUMNS)  # the lines' keys are sorted
    assert ITEM_COLUMNS.index("image_note") + 1 == ITEM_COLUMNS.index("audio_note")
    assert (rows["g1-a"]["image_note"], rows["g1-a"]["audio_note"]) == ("A kitchen table with burnt toast.", AUDIO_EN)
    assert (rows["g2-b"]["image_note"], rows["g2-b"]["audio_note"]) == (IMAGE_ZH, None)
    assert rows["g1-b"]["image_note"] is None and rows["g1-b"]["audio_note"] is None
    pq = require("pyarrow.parquet")
    table = pq.read_table(release / "data" / "items.parquet")
    assert table.column_names == list(ITEM_COLUMNS)
    notes = dict(zip(table.column("id").to_pylist(), table.column("audio_note").to_pylist(), strict=True))
    assert notes == {"g1-a": AUDIO_EN, "g1-b": None, "g2-a": None, "g2-b": None}
    assert verify_release(release).mismatches == []
    report = reproduce_release(release, replay_verdicts)  # the grammar inputs, notes included, re-derive
    assert report.ok, report.differences


def test_the_note_columns_are_declared_and_load(release: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    document = json.loads((release / "croissant.json").read_text())
    fields = {f["name"]: f for f in document["recordSet"][0]["field"]}
    for name in ("image_note", "audio_note"):
        assert fields[name]["dataType"] == "sc:Text"
        assert fields[name]["source"]["extract"] == {"column": name}
    mlc = require("mlcroissant")
    dataset = mlc.Dataset(jsonld=release / "croissant.json")
    assert not dataset.metadata.issues.errors
    loaded = {r["items/id"].decode(): r for r in dataset.records("items")}
    assert loaded["g1-a"]["items/audio_note"].decode() == AUDIO_EN
    assert loaded["g2-b"]["items/image_note"].decode() == IMAGE_ZH
    assert len(list(dataset.records("admission-units"))) == 4  # whose ``extra`` holds the notes
    datasets = require("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    ds = datasets.load_dataset(str(release), split="test", cache_dir=str(tmp_path / "hf"))
    assert ds.features["audio_note"] == datasets.Value("string") and ds.info.features == ds.features
    assert dict(zip(ds["id"], ds["image_note"], strict=True))["g2-b"] == IMAGE_ZH


def test_a_release_without_notes_has_the_columns_all_null(admitted_ws: Workspace, tmp_path: Path) -> None:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    rows = records(tmp_path / "r")
    assert all(row["image_note"] is None and row["audio_note"] is None for row in rows.values())
    assert all(sorted(row) == sorted(ITEM_COLUMNS) for row in rows.values())
