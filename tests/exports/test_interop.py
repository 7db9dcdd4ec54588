"""Releases load with Hugging Face `datasets` and validate as Croissant 1.1 with `mlcroissant` (both offline)."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from types import ModuleType

import pytest

from curation.workspace import Workspace
from exports.build import build_release


def require(module: str) -> ModuleType:
    """The dev extra installs both; in CI a missing one is a failure, elsewhere a skip."""
    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is not installed; CI installs it with the dev extra")
        pytest.skip(f"{module} is not installed (pip install 'omnicurate[release-check]')")


@pytest.fixture
def release(admitted_ws: Workspace, tmp_path: Path) -> Path:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    return tmp_path / "r"


def test_datasets_loads_the_parquet_with_the_declared_features(release: Path, tmp_path: Path, monkeypatch) -> None:
    datasets = require("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.chdir(release)  # the media columns decode from paths relative to the release folder
    ds = datasets.load_dataset(
        "parquet", data_files="data/items.parquet", split="train", cache_dir=str(tmp_path / "hf")
    )
    assert ds.num_rows == 4
    assert ds["id"] == ["g1-a", "g1-b", "g2-a", "g2-b"]
    features = ds.features
    assert features["options"] == datasets.List(datasets.Value("string"))
    assert features["tier"] == datasets.Value("int32") and features["context"] == datasets.Value("string")
    assert ds["options"][2] == ["grateful", "sarcastic", "ambivalent"]  # a column: no medium decoded
    assert features["image"] == datasets.Image() and features["audio"] == datasets.Audio()
    for column, feature in (("image", datasets.Image), ("audio", datasets.Audio)):
        paths = [media["path"] for media in ds.cast_column(column, feature(decode=False))[column]]
        assert all(path.startswith("media/") and (release / path).is_file() for path in paths)
        assert paths == [json.loads(line)[column] for line in (release / "data/items.jsonl").read_text().splitlines()]
    features_yaml = (release / "README.md").read_text().split("  features:\n")[1].split("  download_size:")[0]
    declared = [line.split(": ", 1)[1] for line in features_yaml.splitlines() if line.startswith("  - name: ")]
    assert declared == list(features)


def test_the_release_folder_loads_through_its_dataset_card(release: Path, tmp_path: Path, monkeypatch) -> None:
    datasets = require("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    ds = datasets.load_dataset(str(release), split="test", cache_dir=str(tmp_path / "hf"))
    assert ds.num_rows == 4 and ds.features["ambiguous"] == datasets.List(datasets.Value("string"))
    assert ds.info.features == ds.features


def test_croissant_validates_and_yields_the_items(release: Path) -> None:
    mlc = require("mlcroissant")
    dataset = mlc.Dataset(jsonld=release / "croissant.json")
    assert not dataset.metadata.issues.errors
    records = list(dataset.records("items"))
    assert sorted(r["items/id"].decode() for r in records) == ["g1-a", "g1-b", "g2-a", "g2-b"]


def test_croissant_carries_hashes_and_responsible_ai_fields(release: Path) -> None:
    document = json.loads((release / "croissant.json").read_text())
    manifest = {f["path"]: f["sha256"] for f in json.loads((release / "manifest.json").read_text())["files"]}
    objects = {d["@id"]: d for d in document["distribution"] if d["@type"] == "cr:FileObject"}
    assert objects["data/items.parquet"]["sha256"] == manifest["data/items.parquet"]
    assert objects["data/items.jsonl"]["sha256"] == manifest["data/items.jsonl"]
    assert document["conformsTo"] == "http://mlcommons.org/croissant/1.1"
    assert document["rai:annotationsPerItem"].startswith("mean 9.00 review records per item")
    assert any("agreement" in text.lower() for text in document["rai:dataAnnotationAnalysis"])


def test_croissant_yields_the_admission_record(release: Path) -> None:
    mlc = require("mlcroissant")
    dataset = mlc.Dataset(jsonld=release / "croissant.json")
    assert not dataset.metadata.issues.errors
    records = list(dataset.records("admission-records"))
    released = [json.loads(line) for line in (release / "admission/records.jsonl").read_text().splitlines()]
    assert len(records) == len(released) > 0
    assert {r["admission-records/reviewer"].decode() for r in records} == {r["reviewer"] for r in released}
    attestations = list(dataset.records("admission-attestations"))
    assert attestations and all(bool(a["admission-attestations/blind"]) for a in attestations)
    for name in ("units", "outcomes", "exposures"):
        shipped = (release / f"admission/{name}.jsonl").read_text().splitlines()
        assert len(list(dataset.records(f"admission-{name}"))) == len(shipped) > 0
