"""`curate release build|verify|diff|list` for every registered kind, through the CLI: a workspace that holds
one kind needs no --kind, one that holds two must name it, and an unknown kind's error lists every kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.workspace import Workspace
from exports.kind_release import releasable_kinds
from omnicurate.cli.main import app

runner = CliRunner()


def curate(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(root), *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def judge_ws(judge_demo_folder: Path) -> Path:
    return judge_demo_folder


@pytest.fixture(scope="module")
def story_ws(story_demo_folder: Path) -> Path:
    return story_demo_folder


def release_cycle(root: Path, kind: str, units: int) -> None:
    """Build two versions without --kind, verify one, list both, diff them: each names the kind."""
    built = curate(root, "release", "build", "2.0.0", "--json")
    assert built.exit_code == 0, built.output
    document = json.loads(built.stdout)
    assert document["kind"] == kind and document["items"] == units
    manifest = json.loads((Path(document["path"]) / "manifest.json").read_text())
    assert manifest.get("kind", "mcq") == kind
    assert curate(root, "release", "build", "2.0.1", "--kind", kind).exit_code == 0
    verified = curate(root, "release", "verify", document["path"], "--json")
    assert verified.exit_code == 0 and json.loads(verified.stdout)["kind"] == kind
    listed = json.loads(curate(root, "release", "list", "--json").stdout)
    assert {(r["version"], r["kind"]) for r in listed} >= {("2.0.0", kind), ("2.0.1", kind)}
    diff = json.loads(
        curate(root, "release", "diff", document["path"], str(root / "releases" / "2.0.1"), "--json").stdout
    )
    assert diff["kind"] == kind and diff["unchanged"] == units and not diff["changed"]


def test_mcq_releases_without_a_flag(admitted_ws: Workspace) -> None:
    release_cycle(admitted_ws.root, "mcq", 4)


def test_story_releases_without_a_flag(story_ws: Path) -> None:
    status = json.loads(curate(story_ws, "status", "--json").stdout)
    admitted = sum(1 for st in status if st["kind"] == "story_transition" and st["state"] == "admitted")
    assert admitted >= 7, status  # the demo admits most of its 12 transitions; the release holds exactly those
    release_cycle(story_ws, "story_transition", admitted)


def test_judge_releases_from_the_cli(judge_ws: Path) -> None:
    release_cycle(judge_ws, "judge_task", 12)
    said = curate(judge_ws, "release", "build", "2.0.2", "--notes", str(judge_ws / "demo-sources" / "tasks.jsonl"))
    assert said.exit_code == 2 and "--notes does not apply to a judge_task release" in said.stderr
    assert not (judge_ws / "releases" / "2.0.2").exists()


def test_every_releasable_kind_is_tested_here() -> None:
    tested = {"mcq", "story_transition", "judge_task"}
    assert {k.name for k in releasable_kinds()} == tested


def test_an_unknown_kind_lists_them_all_and_two_kinds_need_the_flag(admitted_ws: Workspace, judge_ws: Path) -> None:
    unknown = curate(admitted_ws.root, "release", "build", "1.0.0", "--kind", "judges")
    assert unknown.exit_code == 2
    assert "unknown kind 'judges'; kinds are mcq, judge_task, story_transition" in unknown.stderr
    admitted_ws.add_person("curator", ["maintainer"])
    source = str(judge_ws / "demo-sources" / "tasks.jsonl")
    tasks = curate(admitted_ws.root, "judge", "import", "tasks", source, "--by", "curator")
    assert tasks.exit_code == 0, tasks.output
    both = curate(admitted_ws.root, "release", "build", "1.0.0")
    assert both.exit_code == 2 and "holds several kinds (mcq, judge_task); name one with --kind" in both.stderr
    assert not (admitted_ws.root / "releases" / "1.0.0").exists()
    mcq = curate(admitted_ws.root, "release", "build", "1.0.0", "--kind", "mcq", "--json")
    assert mcq.exit_code == 0 and json.loads(mcq.stdout)["items"] == 4
    refused = curate(admitted_ws.root, "release", "build", "1.0.1", "--kind", "judge")  # the demo's short name
    assert refused.exit_code == 1 and "no task has a final checklist yet" in refused.stderr
