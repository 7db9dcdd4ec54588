"""Issue 22, case 7: `curate release verify` validates the manifest's version (never printing it raw),
cross-checks a story release's text fingerprints, catches two judge media swapped together with their
manifest entries, and refuses a FIFO named manifest.json instead of hanging on it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.errors import CurateError
from exports.verify import diff_releases, verify_release
from omnicurate.cli.main import app
from tests.conftest import DemoTemplates
from tests.exports.admission_helpers import template_release

runner = CliRunner()


@pytest.fixture
def story_built(demo_templates: DemoTemplates) -> Path:
    return template_release(demo_templates, "story", "0.1.0")


@pytest.fixture
def judge_built(demo_templates: DemoTemplates) -> Path:
    return template_release(demo_templates, "judge", "1.0.0")


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def _save(folder: Path, manifest: dict) -> None:
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _rehash(folder: Path, manifest: dict, rel: str) -> None:
    data = (folder / rel).read_bytes()
    for entry in manifest["files"]:
        if entry["path"] == rel:
            entry["sha256"], entry["size"] = hashlib.sha256(data).hexdigest(), len(data)


@pytest.mark.parametrize("version", ["1.0.0\nOK 9.9.9", "../../etc", "\x1b[2J1.0.0", 7])
def test_a_bad_manifest_version_is_named_and_never_printed_raw(story_built: Path, tmp_path: Path, version) -> None:  # type: ignore[no-untyped-def]
    folder = Path(shutil.copytree(story_built, tmp_path / "r"))
    manifest = _manifest(folder)
    manifest["version"] = version
    _save(folder, manifest)
    report = verify_release(folder)
    assert report.version == ""
    assert any(m.path == "manifest.json" and "is not a semantic version" in m.detail for m in report.mismatches)
    result = runner.invoke(app, ["release", "verify", str(folder)])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\nOK 9.9.9" not in result.output
    assert diff_releases(story_built, folder)["new"]["version"] == ascii(version)


def test_story_text_fingerprints_are_cross_checked(story_built: Path, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(story_built, tmp_path / "r"))
    assert verify_release(folder).ok
    rel = "data/transitions.jsonl"
    rows = [json.loads(line) for line in (folder / rel).read_text(encoding="utf-8").splitlines()]
    rows[0]["next_text"] = "A different ending, written later."
    (folder / rel).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    manifest = _manifest(folder)
    _rehash(folder, manifest, rel)  # a careful forger re-hashes the file list
    _save(folder, manifest)
    details = [m.detail for m in verify_release(folder).mismatches]
    assert f"item {rows[0]['id']}: text fingerprints differ from {rel}" in details


def test_swapped_judge_media_and_entries_are_caught(judge_built: Path, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(judge_built, tmp_path / "r"))
    assert verify_release(folder).ok
    manifest = _manifest(folder)
    media = sorted((e for e in manifest["files"] if e["path"].startswith("media/")), key=lambda e: e["path"])
    a, b = media[0], media[1]
    data_a, data_b = (folder / a["path"]).read_bytes(), (folder / b["path"]).read_bytes()
    (folder / a["path"]).write_bytes(data_b)
    (folder / b["path"]).write_bytes(data_a)
    a["sha256"], b["sha256"] = b["sha256"], a["sha256"]
    a["size"], b["size"] = b["size"], a["size"]
    _save(folder, manifest)
    bad = {m.path for m in verify_release(folder).mismatches if "named by its SHA-256" in m.detail}
    assert bad == {a["path"], b["path"]}


def test_a_fifo_manifest_is_refused_without_hanging(story_built: Path, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(story_built, tmp_path / "r"))
    (folder / "manifest.json").unlink()
    os.mkfifo(folder / "manifest.json")
    with pytest.raises(CurateError, match="not a regular file"):
        verify_release(folder)
    result = runner.invoke(app, ["release", "verify", str(folder)])
    assert result.exit_code == 2 and "not a regular file" in result.output
