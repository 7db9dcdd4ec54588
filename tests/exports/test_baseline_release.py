"""The release's human baseline files: the subset with its strata and the report, raters unnamed."""

from __future__ import annotations

import json
from pathlib import Path

from curation.baseline.campaign import create_campaign, record_answer
from curation.workspace import Workspace
from exports.baseline import card_lines, write_baseline
from exports.writer import ReleaseWriter


def test_a_workspace_without_a_campaign_writes_nothing(workspace: Workspace, tmp_path: Path) -> None:
    writer = ReleaseWriter(tmp_path / "empty")
    assert write_baseline(writer, workspace, []) == {} and writer.files == {} and card_lines({}) == []


def test_the_release_carries_the_subset_and_the_figures_apart(demo_workspace: Workspace, tmp_path: Path) -> None:
    plan = create_campaign(
        demo_workspace, "hb", size=3, raters_per_item=1, seed=2, pool="all", raters=["rev5", "rev6", "maya"]
    )
    first = plan.campaign.items[0]
    rater = plan.assignments[first][0]
    record_answer(demo_workspace, "hb", first, rater, "open", "words")
    record_answer(demo_workspace, "hb", first, rater, "standard", demo_workspace.item(first).answer)
    writer = ReleaseWriter(tmp_path / "rel")
    reports = write_baseline(writer, demo_workspace, [first])
    assert {"baseline/hb/subset.jsonl", "baseline/hb/report.json"} <= set(writer.files)
    lines = [json.loads(line) for line in (tmp_path / "rel/baseline/hb/subset.jsonl").read_text().splitlines()]
    assert [line["item"] for line in lines] == plan.campaign.items
    assert [line["in_release"] for line in lines] == [True, False, False]
    assert lines[0]["answers"] == {"open_ended": 1, "standard": 1} and lines[0]["stratum"].startswith("en|tier ")
    report = json.loads((tmp_path / "rel/baseline/hb/report.json").read_text())
    assert report["human"]["standard"]["acc_q"]["value"] == 1.0
    assert list(report["by_rater"]) == ["rater-1"] and rater not in json.dumps(report)
    card = "\n".join(card_lines({"hb": reports["hb"]}))
    assert "| Human, Standard | 100.0 |" in card and "not the whole benchmark" in card
