"""Every kind's croissant.json reads whole in the oldest mlcroissant the project supports (issue 43): the
``mlcroissant>=X`` of pyproject.toml's release-check extra, installed in a venv of its own by
.ci/setup.d/45-croissant-min.sh ($CURATE_MLCROISSANT_MIN_PYTHON), as well as in the latest (the project venv's,
which tests/exports/test_release_loading.py reads with too). Each version runs in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.conftest import DemoTemplates, missing_tool, require_module

MIN_PYTHON_ENV = "CURATE_MLCROISSANT_MIN_PYTHON"
ROOT = Path(__file__).resolve().parents[2]
KINDS = ("mcq", "story", "judge")
READ_EVERY_RECORD = """
import importlib.metadata, json, logging, sys
import mlcroissant as mlc

logging.getLogger("absl").setLevel(logging.ERROR)
dataset = mlc.Dataset(jsonld=sys.argv[1])
def plain(value):
    return value.decode() if isinstance(value, bytes) else str(value)
records = {
    rs.name: sorted(json.dumps({k: plain(v) for k, v in r.items()}, sort_keys=True) for r in dataset.records(rs.uuid))
    for rs in dataset.metadata.record_sets
}
errors = sorted(dataset.metadata.issues.errors)
print(json.dumps({"version": importlib.metadata.version("mlcroissant"), "errors": errors, "records": records}))
"""
"""Prints the mlcroissant version, the metadata's errors and, per record set, its records (each as sorted JSON
of its values as text, the records sorted), so that two versions' readings compare whole."""


@pytest.fixture(scope="module")
def min_python() -> str:
    python = os.environ.get(MIN_PYTHON_ENV, "")
    if not python:
        missing_tool(f"{MIN_PYTHON_ENV} is not set: bash .ci/setup.d/45-croissant-min.sh builds that venv")
    if not os.access(python, os.X_OK):
        missing_tool(f"{MIN_PYTHON_ENV}={python} is not a program: rerun bash .ci/setup.d/45-croissant-min.sh")
    return python


def pinned_minimum() -> str:
    """The X of ``mlcroissant>=X`` in pyproject.toml's release-check extra."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (pin,) = [r for r in extras["release-check"] if r.startswith("mlcroissant>=")]
    return pin.removeprefix("mlcroissant>=")


def read_every_record(python: str, croissant: Path) -> dict[str, Any]:
    """READ_EVERY_RECORD's output, run by PYTHON isolated (-I: no PYTHONPATH, no user site)."""
    done = subprocess.run(
        [python, "-I", "-c", READ_EVERY_RECORD, str(croissant)], capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        pytest.fail(f"{python} could not read every record set of {croissant}:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def shipped_counts(release: Path) -> dict[str, int]:
    """Per record set of croissant.json, the records its one source file holds (JSON Lines or Parquet)."""
    counts = {}
    for record_set in json.loads((release / "croissant.json").read_text())["recordSet"]:
        (source,) = {field["source"]["fileObject"]["@id"] for field in record_set["field"]}
        if source.endswith(".parquet"):
            counts[record_set["name"]] = pq.read_metadata(release / source).num_rows
        elif source.endswith(".jsonl"):
            text = (release / source).read_text(encoding="utf-8")
            counts[record_set["name"]] = sum(1 for line in text.splitlines() if line.strip())
        else:
            pytest.fail(f"record set {record_set['name']}: a source this test cannot count: {source}")
    return counts


@pytest.mark.parametrize("kind", KINDS)
def test_every_record_set_reads_whole_in_the_oldest_supported_mlcroissant(
    demo_templates: DemoTemplates, min_python: str, kind: str
) -> None:
    template, _db = demo_templates[kind]["sqlite"]
    (release,) = (template / "releases").iterdir()
    oldest = read_every_record(min_python, release / "croissant.json")
    assert oldest["version"] == pinned_minimum(), f"{MIN_PYTHON_ENV} is not the pinned minimum's venv"
    assert oldest["errors"] == []
    counts = {name: len(records) for name, records in oldest["records"].items()}
    assert counts == shipped_counts(release)
    assert sum(counts.values()) > 0
    require_module("mlcroissant", "pip install -e '.[release-check]'")
    latest = read_every_record(sys.executable, release / "croissant.json")
    assert latest["errors"] == []
    assert latest["records"] == oldest["records"], (oldest["version"], latest["version"])
