"""``curate kinds``: every registered kind with its stages, as the registry and the workspace config say."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from curation.config import ReviewSettings
from curation.kinds import kinds
from omnicurate.cli.main import app


def test_kinds_lists_every_registered_kind_with_its_stages_in_order() -> None:
    result = CliRunner().invoke(app, ["kinds", "--json"], catch_exceptions=False)
    assert result.exit_code == 0
    rows = {row["kind"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {kind.name for kind in kinds()}
    mcq = rows["mcq"]
    assert [s["name"] for s in mcq["stages"]] == [
        "grammar",
        "image_screening",
        "audio_signoff",
        "subset_checklist",
        "answer_check",
        "group_integration",
    ]
    quorum = {s["name"]: s["quorum"] for s in mcq["stages"]}
    assert quorum["grammar"] == ReviewSettings().grammar_quorum == 2  # TRIAD C.2.2: two reviewers sign off
    assert quorum["image_screening"] == 2  # TRIAD §4.2: AI-generated images are screened by two annotators
    assert mcq["stages"][-1]["scope"] == "group"
    assert "video" in rows["judge_task"]["modalities"]


def test_kinds_in_words_names_each_stage_under_its_kind() -> None:
    text = CliRunner().invoke(app, ["kinds"], catch_exceptions=False).stdout
    lines = text.splitlines()
    story = next(i for i, line in enumerate(lines) if line.startswith("story_transition:"))
    assert lines[story + 1].strip().startswith("filter (item, quorum 1)")
    help_lines = CliRunner().invoke(app, ["--help"], catch_exceptions=False).stdout.splitlines()
    assert any(line.split()[:1] == ["kinds"] for line in help_lines)
