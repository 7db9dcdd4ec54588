"""`curate demo --kind story`: screened, reviewed, audited and released, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.story import build_story_demo
from tests.conftest import _pg_database

runner = CliRunner()


@pytest.fixture
def story_demo(tmp_path: Path, db_backend: str) -> Iterator[Workspace]:
    drop = None
    root = tmp_path / "story-demo"
    if db_backend == "postgres":
        url, drop = _pg_database()
        Workspace.init(root, url).close()
    ws = build_story_demo(root, log=lambda _msg: None)
    yield ws
    ws.close()
    if drop:
        drop()


def test_story_demo_releases_the_admitted_transitions_with_funnel_audit_and_provenance(story_demo) -> None:  # type: ignore[no-untyped-def]
    release = story_demo.root / "releases" / "0.1.0"
    records = [json.loads(line) for line in (release / "data" / "transitions.jsonl").read_text().splitlines()]
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["kind"] == "story_transition" and len(manifest["items"]) == len(records) == 8
    assert {"minhash", "current_image_sha256", "next_text_sha256"} <= set(manifest["items"][0])
    for record in records:  # every shipped image is in the release, named by its hash
        assert (release / record["current_image"]).is_file() and (release / record["next_image"]).is_file()
    revised = [r for r in records if r["provenance"]["conditions"]["revised_fields"]]
    assert len(revised) == 1 and revised[0]["provenance"]["conditions"]["revised_fields"] == [
        "conditions.ambient_sound"
    ]
    assert revised[0]["conditions"]["ambient_sound"] == "rain on a tin roof" and revised[0]["revision"] == 2
    screening = json.loads((release / "screening.json").read_text())
    steps = {s["step"]: s for s in screening["screening"]["steps"]}
    assert steps["language"]["reasons"] == {"language:sw": steps["language"]["dropped"]}
    assert screening["review"]["dropped_by_reviewers"] == 1 and screening["review"]["released"] == 8
    assert screening["screening"]["candidates"] == 74  # from the demo's 15 EPUBs (library/), not a candidates file
    assert sorted(p.name for p in (story_demo.root / "library").iterdir())[:2] == ["bk00000.epub", "bk00001.epub"]
    assert screening["review"]["held_by_gates"] == {
        "leak:duplicate_condition": 2,
        "leak:reference_span": 1,
        "leak:shared_span:scene": 1,
    }
    card = (release / "README.md").read_text()
    assert "| language | " in card and "| reviewers (filter) | 12 | 11 | 1 | filter:drop |" in card
    assert "- Kito and the zebra (bk00000)" not in card  # a Swahili book, screened out: not credited
    assert "### Attributions" in card and "illustrated by" in card and "### Duplicate clusters" in card
    audit = json.loads((release / "audit.json").read_text())
    assert audit["items"] == 8 and audit["duplicate_conditions"] == [] and audit["span_leaks"] == []
    # the republished book's transition is kept with its copy, both annotated with their cluster (App. C)
    [cluster] = audit["clusters"]
    assert cluster["items"] == ["bk00004-p00", "bk00004r-p00"]
    assert {r["id"]: r["duplicate_clusters"] for r in records if r["duplicate_clusters"]} == {
        "bk00004-p00": [cluster["id"]],
        "bk00004r-p00": [cluster["id"]],
    }
    origin = next(r for r in records if r["id"] == "bk00004-p00")
    assert origin["collection"] == "african_storybook" and origin["license"] == "CC-BY-4.0"
    assert origin["origin"]["current"] == {"file": "bk00004.epub", "href": "EPUB/page01.xhtml", "index": 0}
    assert "published by African Storybook" in origin["origin"]["attribution"]
    croissant = json.loads((release / "croissant.json").read_text())
    assert croissant["recordSet"][0]["key"] == {"@id": "transitions/id"}
    verify = runner.invoke(app, ["release", "verify", str(release)], catch_exceptions=False)
    assert verify.exit_code == 0, verify.stderr
    # building the same state again is a no-op with the same bytes
    again = runner.invoke(
        app,
        [
            "-w",
            str(story_demo.root),
            "release",
            "build",
            "0.1.0",
            "--kind",
            "story",
            "--name",
            "omnicurate-story-demo",
            "--json",
        ],
        catch_exceptions=False,
    )
    assert again.exit_code == 0 and json.loads(again.stdout)["manifest_sha256"] == manifest_sha(release)


def test_story_demo_people_sign_in_with_the_demo_password(story_demo) -> None:  # type: ignore[no-untyped-def]
    from annotation_ui.signin import sign_in
    from omnicurate.demo import DEMO_PASSWORD

    for name in ("rev1", "rev2", "rev3", "maya"):
        assert sign_in(story_demo, name, DEMO_PASSWORD).name == name


def manifest_sha(release: Path) -> str:
    import hashlib

    return hashlib.sha256((release / "manifest.json").read_bytes()).hexdigest()


def test_unknown_demo_kind_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--kind", "poems", str(tmp_path / "d")], catch_exceptions=False)
    assert result.exit_code == 2 and "use mcq, story or judge" in result.stderr
