"""`[story] duplicates`: "annotate" releases clustered transitions with their cluster named in the data, the
card and audit.json (and `release verify` holds them to it); "block" releases them only once resolved."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checker.structured import ReplayStructured
from curation.config import CONFIG_NAME
from curation.errors import ValidationFailed
from curation.reviews import import_reviews
from curation.screening.importer import import_candidates
from curation.screening.items import KIND, audit_story_items, promote_selected, revise_items
from curation.screening.pipeline import run_screen
from curation.screening.revise import ReviseRecord
from curation.screening.settings import ScreenSettings
from curation.study.sensitivity import flagged_in_release
from curation.workflow import derive_status
from exports.story_release import build_story_release
from exports.verify import verify_release
from omnicurate.cli.main import app
from omnicurate.demo.story_corpus import build_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return build_corpus(tmp_path_factory.mktemp("story"), books=10)


def _reviewed(ws, corpus, tmp_path: Path, policy: str):  # type: ignore[no-untyped-def]
    ws.settings.story.duplicates = policy
    ws.settings.save(ws.root / CONFIG_NAME)
    for name in ("rev1", "rev3"):
        ws.add_person(name, ["reviewer"])
    import_candidates(ws, corpus.candidates)
    run_screen(ws, ScreenSettings(), ReplayStructured(str(corpus.replay)))
    promote_selected(ws, ScreenSettings())
    items = sorted(s.id for s in derive_status(ws) if s.kind == KIND)
    path = tmp_path / "filter.jsonl"
    path.write_text(
        "".join(json.dumps({"item": i, "stage": "filter", "reviewer": "rev1", "verdict": "keep"}) + "\n" for i in items)
    )
    import_reviews(ws, path)
    revise_items(ws, [(0, ReviseRecord(item=i, reviewer="rev3")) for i in items])
    audit_story_items(ws)
    return ws


def _transitions(release: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    lines = (release / "data" / "transitions.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def _rewrite_listed(release: Path, rel: str, data: bytes) -> None:
    """Edit a file and its manifest entry together: only the cross-reference check can notice."""
    import hashlib

    (release / rel).write_bytes(data)
    manifest = json.loads((release / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] == rel:
            entry["sha256"], entry["size"] = hashlib.sha256(data).hexdigest(), len(data)
    (release / "manifest.json").write_text(json.dumps(manifest))


def test_annotate_releases_the_clustered_transitions_with_their_cluster(workspace, corpus, tmp_path) -> None:  # type: ignore[no-untyped-def]
    ws = _reviewed(workspace, corpus, tmp_path, "annotate")
    original, copy = corpus.planted["republished"].split("|")
    states = {s.id: s for s in derive_status(ws)}
    assert states[original].state == states[copy].state == "admitted"
    [code] = [r for r in states[copy].reasons if r.startswith("duplicate:")]
    cluster = code.removeprefix("duplicate:")
    release = build_story_release(ws, "1.0.0", out=tmp_path / "release").path
    records = _transitions(release)
    assert records[original]["duplicate_clusters"] == records[copy]["duplicate_clusters"] == [cluster]
    assert all(r["duplicate_clusters"] == [] for i, r in records.items() if i not in (original, copy))
    audit = json.loads((release / "audit.json").read_text())
    assert audit["duplicates"] == "annotate" and [c["id"] for c in audit["clusters"]] == [cluster]
    card = (release / "README.md").read_text()
    assert f"- {cluster}: {original}, {copy}" in card and 'duplicates = "annotate"' in card
    assert verify_release(release).ok
    # the study's sensitivity analysis takes these flagged transitions from the release it rated
    manifest_sha = hashlib.sha256((release / "manifest.json").read_bytes()).hexdigest()
    assert flagged_in_release(release, manifest_sha) == sorted([original, copy])
    with pytest.raises(ValidationFailed, match="is not the study's release"):
        flagged_in_release(release, "0" * 64)

    # an annotation that no longer agrees with audit.json is caught, even with the file list rewritten to match
    records[copy]["duplicate_clusters"] = []
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records.values()).encode()
    _rewrite_listed(release, "data/transitions.jsonl", body)
    result = CliRunner().invoke(app, ["release", "verify", str(release)])
    assert result.exit_code == 1
    assert f"transition {copy}: duplicate_clusters [] differs from audit.json's ['{cluster}']" in result.output


def test_block_releases_a_cluster_only_once_resolved(workspace, corpus, tmp_path) -> None:  # type: ignore[no-untyped-def]
    ws = _reviewed(workspace, corpus, tmp_path, "block")
    original, copy = corpus.planted["republished"].split("|")
    states = {s.id: s for s in derive_status(ws)}
    assert states[original].state == states[copy].state == "held"
    release = build_story_release(ws, "1.0.0", out=tmp_path / "r1").path
    records = _transitions(release)
    assert original not in records and copy not in records
    assert all(r["duplicate_clusters"] == [] for r in records.values())
    audit = json.loads((release / "audit.json").read_text())
    assert audit["duplicates"] == "block" and audit["clusters"] == []
    assert "No transition of this release is in a duplicate cluster." in (release / "README.md").read_text()
    assert verify_release(release).ok

    ws.add_person("maya", ["maintainer"])
    cluster = next(r for r in states[copy].reasons if r.startswith("duplicate:")).removeprefix("duplicate:")
    result = CliRunner().invoke(
        app, ["-w", str(ws.root), "audit", "resolve", cluster, "--by", "maya", "--keep", original]
    )
    assert result.exit_code == 0, result.output
    states = {s.id: s for s in derive_status(ws)}
    assert states[original].state == "admitted" and states[copy].state == "discarded"
    release = build_story_release(ws, "1.1.0", out=tmp_path / "r2").path
    records = _transitions(release)
    assert original in records and copy not in records and records[original]["duplicate_clusters"] == []
    assert verify_release(release).ok
