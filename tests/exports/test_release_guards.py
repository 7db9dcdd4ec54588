"""Issue 22, case 1 and 7: every kind's builder goes through one target check and one publish, on SQLite and
PostgreSQL. A destination inside the workspace (its media store included) is refused before anything is
written; a renamed workspace rebuilds its version; story releases honour --notes and refuse --allow-partial;
the litter of killed builds of any version is cleaned by the next build."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from curation.errors import ValidationFailed
from curation.workspace import Workspace
from exports.build import build_release
from exports.judge_release import build_judge_release
from exports.story_release import build_story_release
from exports.tables import Release
from omnicurate.cli.main import app
from omnicurate.demo import build_demo
from tests.conftest import DemoTemplates

runner = CliRunner()


def _demo(tmp_path: Path, db_backend: str, demo_templates: DemoTemplates, kind: str) -> Iterator[Workspace]:
    ws = demo_templates.copy(kind, tmp_path / "demo-ws", db_backend)
    yield ws
    demo_templates.discard(ws)


@pytest.fixture
def story_ws(tmp_path: Path, db_backend: str, demo_templates: DemoTemplates) -> Iterator[Workspace]:
    yield from _demo(tmp_path, db_backend, demo_templates, "story")


@pytest.fixture
def judge_ws(tmp_path: Path, db_backend: str, demo_templates: DemoTemplates) -> Iterator[Workspace]:
    yield from _demo(tmp_path, db_backend, demo_templates, "judge")


def _store_names_are_hashes(ws: Workspace) -> None:
    for path in (ws.root / "media").rglob("*"):
        if path.is_file() and ".staging" not in path.parts:
            assert len(path.name.split(".")[0]) == 64, path


def _versions(ws: Workspace) -> set[str]:
    with ws.session() as s:
        return set(s.execute(select(Release.version)).scalars())


@pytest.mark.parametrize("inside", ["media/zz", ".", "sub/folder"])
def test_story_release_into_the_workspace_is_refused_before_writing(story_ws: Workspace, inside: str) -> None:
    before = _versions(story_ws)
    target = story_ws.root / inside
    result = runner.invoke(
        app, ["-w", str(story_ws.root), "release", "build", "0.2.0", "--kind", "story", "--out", str(target)]
    )
    assert result.exit_code == 2, result.output
    assert "inside it" in result.output
    assert _versions(story_ws) == before  # nothing registered
    assert not (story_ws.root / "media" / "zz").exists() and not (story_ws.root / "sub").exists()
    assert not list(story_ws.root.glob(".*.tmp-*")) and not list((story_ws.root / "media").glob(".zz.tmp-*"))
    _store_names_are_hashes(story_ws)


def test_judge_release_into_the_media_store_is_refused_before_writing(judge_ws: Workspace) -> None:
    before = _versions(judge_ws)
    with pytest.raises(ValidationFailed, match="inside it"):
        build_judge_release(judge_ws, "0.9.0", out=judge_ws.root / "media" / "zz")
    assert _versions(judge_ws) == before
    assert not (judge_ws.root / "media" / "zz").exists()
    _store_names_are_hashes(judge_ws)


def test_a_renamed_story_workspace_rebuilds_its_version_byte_for_byte(story_ws: Workspace, tmp_path: Path) -> None:
    published = story_ws.root / "releases" / "0.1.0"
    manifest = (published / "manifest.json").read_bytes()
    story_ws.close()
    moved = Path(shutil.move(str(story_ws.root), str(tmp_path / "renamed-folder")))
    ws = Workspace.open(moved)
    try:
        again = build_story_release(ws, "0.1.0", out=tmp_path / "rebuilt")
        assert (tmp_path / "rebuilt" / "manifest.json").read_bytes() == manifest
        assert again.manifest_sha256 == build_story_release(ws, "0.1.0", out=tmp_path / "rebuilt").manifest_sha256
    finally:
        ws.close()


def test_a_renamed_judge_workspace_rebuilds_its_version(judge_ws: Workspace, tmp_path: Path) -> None:
    manifest = (judge_ws.root / "releases" / "1.0.0" / "manifest.json").read_bytes()
    judge_ws.close()
    moved = Path(shutil.move(str(judge_ws.root), str(tmp_path / "judge-renamed")))
    ws = Workspace.open(moved)
    try:
        build_judge_release(ws, "1.0.0", out=tmp_path / "rebuilt")
        assert (tmp_path / "rebuilt" / "manifest.json").read_bytes() == manifest
    finally:
        ws.close()


def test_story_release_notes_reach_the_card_and_allow_partial_is_refused(story_ws: Workspace, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("Second cut: 中文 notes kept.\n", encoding="utf-8")
    base = ["-w", str(story_ws.root), "release", "build", "0.3.0", "--kind", "story"]
    refused = runner.invoke(app, [*base, "--allow-partial", "--out", str(tmp_path / "p")])
    assert refused.exit_code == 2 and "--allow-partial" in refused.output
    assert not (tmp_path / "p").exists() and "0.3.0" not in _versions(story_ws)
    built = runner.invoke(app, [*base, "--notes", str(notes), "--out", str(tmp_path / "r")])
    assert built.exit_code == 0, built.output
    card = (tmp_path / "r" / "README.md").read_text(encoding="utf-8")
    assert "## Release notes" in card and "Second cut: 中文 notes kept." in card


def test_killed_builds_of_any_version_leave_no_litter_after_the_next_build(tmp_path: Path) -> None:
    ws = build_demo(tmp_path / "ws", log=lambda _msg: None)
    try:
        releases = ws.root / "releases"
        for version in ("0.0.1", "9.9.9"):  # builds of other versions, killed after writing
            stale = releases / f".{version}.tmp-deadbeef0000"
            (stale / "media").mkdir(parents=True)
            (stale / "media" / "x.jpg").write_bytes(b"partial")
            (releases / f".{version}.tmp-deadbeef0000.lock").touch()
        build_release(ws, "2.0.0")
        assert sorted(p.name for p in releases.iterdir() if p.name.startswith(".")) == []
    finally:
        ws.close()
