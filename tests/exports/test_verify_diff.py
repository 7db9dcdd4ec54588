"""`curate release verify|diff|list|build` on built releases: tamper detection, errata, exit codes, JSON."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.workspace import Workspace
from exports.build import build_release
from exports.verify import diff_releases, verify_release
from omnicurate.cli.main import app
from tests.exports.workspace_factory import fill_workspace, group_rows

runner = CliRunner()


@pytest.fixture
def release(admitted_ws: Workspace, tmp_path: Path) -> Path:
    build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    return tmp_path / "r"


def kinds(folder: Path) -> set[tuple[str, str]]:
    return {(m.kind, m.path) for m in verify_release(folder).mismatches}


def test_an_intact_release_verifies(release: Path) -> None:
    report = verify_release(release)
    assert report.ok and report.items == 4 and report.version == "1.0.0"
    result = runner.invoke(app, ["release", "verify", str(release)])
    assert result.exit_code == 0 and "OK" in result.output


def test_one_changed_byte_is_found(release: Path) -> None:
    media = sorted((release / "media").iterdir())[0]
    data = bytearray(media.read_bytes())
    data[len(data) // 2] ^= 0x01
    media.write_bytes(bytes(data))
    assert kinds(release) == {("changed", f"media/{media.name}")}
    result = runner.invoke(app, ["release", "verify", str(release)])
    assert result.exit_code == 1 and f"changed: media/{media.name}" in result.output


def test_an_added_file_is_found(release: Path) -> None:
    (release / "data" / "extra.csv").write_text("id\n")
    assert kinds(release) == {("extra", "data/extra.csv")}


def test_a_removed_file_is_found_with_the_references_it_breaks(release: Path) -> None:
    items = [json.loads(x) for x in (release / "data" / "items.jsonl").read_text().splitlines()]
    audio = items[0]["audio"]
    (release / audio).unlink()
    found = verify_release(release).mismatches
    assert ("missing", audio) in {(m.kind, m.path) for m in found}
    broken = [m for m in found if m.kind == "broken_reference"]
    assert len(broken) == 1 and items[0]["id"] in broken[0].detail
    result = runner.invoke(app, ["release", "verify", str(release), "--json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False and {m["kind"] for m in document["mismatches"]} == {"missing", "broken_reference"}


def test_every_mismatch_is_listed_at_once(release: Path) -> None:
    (release / "README.md").write_text("edited\n")
    (release / "stats.json").unlink()
    (release / "stray.bin").write_bytes(b"\0")
    assert kinds(release) == {("changed", "README.md"), ("missing", "stats.json"), ("extra", "stray.bin")}


def test_a_folder_without_manifest_is_bad_input(tmp_path: Path) -> None:
    result = runner.invoke(app, ["release", "verify", str(tmp_path)])
    assert result.exit_code == 2 and "manifest.json" in result.output


def test_diff_lists_added_removed_and_changed_fields(admitted_ws: Workspace, release: Path, tmp_path: Path) -> None:
    rows = group_rows("g1")
    rows[0]["question"] = "What does the speaker really mean?"
    rows[1]["question"] = "What does the speaker really mean?"
    fill_workspace(admitted_ws, tmp_path / "rev", rows + group_rows("g3"))
    build_release(admitted_ws, "1.1.0", out=tmp_path / "r2")
    diff = diff_releases(release, tmp_path / "r2")
    assert diff["added"] == ["g3-a", "g3-b"] and diff["removed"] == []
    changed = {c["id"]: c["fields"] for c in diff["changed"]}
    assert set(changed) == {"g1-a", "g1-b"}
    assert changed["g1-a"]["question"]["new"] == "What does the speaker really mean?"
    assert changed["g1-a"]["revision"] == {"old": 1, "new": 2}
    assert diff["unchanged"] == 2
    reverse = runner.invoke(app, ["release", "diff", str(tmp_path / "r2"), str(release), "--json"])
    assert reverse.exit_code == 0 and json.loads(reverse.stdout)["removed"] == ["g3-a", "g3-b"]
    text = runner.invoke(app, ["release", "diff", str(release), str(tmp_path / "r2")])
    assert (
        "1.0.0 -> 1.1.0: 2 added, 0 removed, 2 changed" in text.output and "~ g1-a: question, revision" in text.output
    )


def test_cli_build_list_and_refusals(admitted_ws: Workspace, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("First public release.\n")
    ws = ["-w", str(admitted_ws.root)]
    built = runner.invoke(app, [*ws, "release", "build", "0.1.0", "--notes", str(notes), "--json"])
    assert built.exit_code == 0, built.output
    document = json.loads(built.stdout)
    assert document["items"] == 4 and document["partial"] is False
    assert "First public release." in (Path(document["path"]) / "README.md").read_text()
    listed = json.loads(runner.invoke(app, [*ws, "release", "list", "--json"]).stdout)
    assert [(r["version"], r["present"]) for r in listed] == [("0.1.0", True)]
    missing_notes = runner.invoke(app, [*ws, "release", "build", "0.2.0", "--notes", str(tmp_path / "none.md")])
    assert missing_notes.exit_code == 2 and "does not exist" in missing_notes.output
    bad = runner.invoke(app, [*ws, "release", "build", "0.1"])
    assert bad.exit_code == 2 and "semantic version" in bad.output
    shutil.rmtree(admitted_ws.root / "media")
    refused = runner.invoke(app, [*ws, "release", "build", "0.2.0"])
    assert refused.exit_code == 1 and "g1-a: media:missing" in refused.output


def test_a_manifest_pointing_outside_the_release_is_invalid(release: Path) -> None:
    manifest = json.loads((release / "manifest.json").read_text())
    count = len(manifest["files"])
    manifest["files"].append({"path": "../outside.txt", "sha256": "0" * 64, "size": 0})
    manifest["files"].append({"path": "no-hash.txt"})
    (release / "manifest.json").write_text(json.dumps(manifest))
    details = {m.detail for m in verify_release(release).mismatches if m.kind == "invalid"}
    assert details == {
        "file entry '../outside.txt' points outside the release",
        f"file entry {count + 2} lacks path, sha256 or size",
    }


def test_manifest_and_files_edited_together_are_caught_with_the_published_digest(
    admitted_ws: Workspace, tmp_path: Path
) -> None:
    result = build_release(admitted_ws, "1.0.0", out=tmp_path / "r")
    readme = tmp_path / "r" / "README.md"
    readme.write_text("forged\n")
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] == "README.md":
            entry.update(sha256=hashlib.sha256(b"forged\n").hexdigest(), size=7)
    (tmp_path / "r" / "manifest.json").write_text(json.dumps(manifest))
    assert verify_release(tmp_path / "r").ok  # consistent with itself
    caught = runner.invoke(app, ["release", "verify", str(tmp_path / "r"), "--manifest-sha256", result.manifest_sha256])
    assert caught.exit_code == 1 and "changed: manifest.json" in caught.output
