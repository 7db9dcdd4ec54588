"""The demo's human baseline step: its scripted answers and replayed judge give the report a hand count gives."""

from __future__ import annotations

import json

import pytest

from curation.workspace import Workspace
from omnicurate.demo.baseline import CAMPAIGN, DATA, baseline_demo


def test_the_demo_baseline_matches_a_count_of_its_scripted_answers(demo_workspace: Workspace) -> None:
    lines: list[str] = []
    report = baseline_demo(demo_workspace, lines.append)
    assert baseline_demo(demo_workspace, lines.append) == report  # a rerun changes nothing
    items = {json.loads(x)["id"]: json.loads(x) for x in (DATA / "items.jsonl").read_text().splitlines()}
    answers = [json.loads(x) for x in (DATA / "baseline_answers.jsonl").read_text().splitlines()]
    verdicts = {
        json.loads(x)["key"]: json.loads(x)["output"] for x in (DATA / "baseline_judge.jsonl").read_text().splitlines()
    }
    right: dict[str, dict[str, dict[str, bool]]] = {"standard": {}, "open": {}}
    for a in answers:
        ok = (
            a["answer"] == items[a["item"]]["answer"]
            if a["form"] == "standard"
            else verdicts[f"baseline:{CAMPAIGN}:{a['item']}:{a['rater']}"] == "correct"
        )
        right[a["form"]].setdefault(a["item"], {})[a["rater"]] = ok
    for form, key in (("standard", "standard"), ("open", "open_ended")):
        per_item = [sum(r.values()) / len(r) for r in right[form].values()]
        groups: dict[str, list[str]] = {}
        for item in right[form]:
            groups.setdefault(items[item]["group"], []).append(item)
        per_group = [
            sum(all(right[form][i][r] for i in members) for r in right[form][members[0]]) / 3
            for members in groups.values()
        ]
        assert report["human"][key]["acc_q"]["value"] == pytest.approx(sum(per_item) / len(per_item))
        assert report["human"][key]["acc_g"]["value"] == pytest.approx(sum(per_group) / len(per_group))
    assert report["items"] == len(items) and report["raters_per_item"] == 3
    shown = f"Standard Acc_q {100 * report['human']['standard']['acc_q']['value']:.1f}"
    assert "scripted answers" in lines[0] and shown in lines[0]
