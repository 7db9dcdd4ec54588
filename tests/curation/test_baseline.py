"""The human baseline: an exactly stratified subset, raters kept off what they wrote or reviewed, a hand-checked report."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from math import ceil, floor
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from curation.baseline.campaign import create_campaign, record_answer, record_grade
from curation.baseline.report import baseline_report, random_baseline
from curation.baseline.sampling import PoolItem, allocate, draw_subset, stratum_key
from curation.errors import CurateError, PermissionDenied
from curation.reference_tables import BaselineAnswer
from curation.tables import Item, ReviewRecord
from curation.workspace import Workspace
from omnicurate.cli.main import app


def test_the_allocation_is_exactly_proportional_with_largest_remainders() -> None:
    # 10 of 30 items: quotas 10*15/30=5, 10*9/30=3, 10*6/30=2 — whole; 7 of 30: 3.5, 2.1, 1.4 -> 3+2+1=6, the
    # largest remainder (0.5) gets the seventh
    assert {k: s for k, (_, s) in allocate({"a": 15, "b": 9, "c": 6}, 10, 0).items()} == {"a": 5, "b": 3, "c": 2}
    shares = allocate({"a": 15, "b": 9, "c": 6}, 7, 0)
    assert {k: s for k, (_, s) in shares.items()} == {"a": 4, "b": 2, "c": 1}
    assert shares["a"][0] == Fraction(7, 2)


def test_a_drawn_subset_is_stratified_exactly_and_reproducible() -> None:
    pool = [
        PoolItem(f"i{n:03}", f"g{n // 3}", ["en", "zh"][n % 2], 1 + n % 3, ["text:a", "audio:b", "image:c"][n % 5 % 3])
        for n in range(97)
    ]
    chosen, strata = draw_subset(pool, 20, seed=7)
    assert len(chosen) == 20 == sum(s.drawn for s in strata) and len(set(chosen)) == 20
    by_key = {s.key: s for s in strata}
    for key, stratum in by_key.items():
        members = [i for i in pool if stratum_key(i) == key]
        quota = Fraction(20 * len(members), 97)
        assert stratum.quota == quota and floor(quota) <= stratum.drawn <= ceil(quota)
        assert sum(1 for i in members if i.id in chosen) == stratum.drawn
    assert draw_subset(pool, 20, seed=7)[0] == chosen
    assert draw_subset(pool, 20, seed=8)[0] != chosen


def test_raters_never_get_an_item_they_authored_or_reviewed(demo_workspace: Workspace) -> None:
    plan = create_campaign(demo_workspace, "b", size=8, raters_per_item=3, seed=1, pool="all")
    with demo_workspace.session() as s:
        items = {i.id: i for i in s.execute(select(Item)).scalars()}
        reviewers: dict[str, set[str]] = {}
        for r in s.execute(select(ReviewRecord)).scalars():
            reviewers.setdefault(r.subject, set()).add(r.reviewer)
    assert len(plan.assignments) == 8
    for item_id, raters in plan.assignments.items():
        group = items[item_id].group_id
        authors = {i.author for i in items.values() if i.group_id == group}
        barred = authors | reviewers.get(f"item:{item_id}", set()) | reviewers.get(f"group:{group}", set())
        assert len(raters) == 3 and not barred & set(raters), (item_id, raters, barred)
    with pytest.raises(CurateError, match="eligible rater"):
        create_campaign(
            demo_workspace, "c", size=8, raters_per_item=3, seed=1, pool="all", raters=["rev1", "rev2", "rev3"]
        )


def test_the_report_matches_a_hand_computation(demo_workspace: Workspace) -> None:
    ws = demo_workspace
    plan = create_campaign(ws, "b", size=4, raters_per_item=2, seed=3, pool="all", raters=["maya", "rev5", "rev6"])
    with ws.session() as s:
        items = {i.id: i for i in s.execute(select(Item).where(Item.id.in_(plan.campaign.items))).scalars()}  # type: ignore[attr-defined]
    wrong = {i: next(k for k in items[i].options if k != items[i].answer) for i in items}
    first = sorted(items)[0]
    right: dict[tuple[str, str], bool] = {}
    for item_id, raters in plan.assignments.items():
        for n, rater in enumerate(raters):
            ok = not (item_id == first and n == 0)  # one rater misses one item
            right[(item_id, rater)] = ok
            record_answer(ws, "b", item_id, rater, "open", "my own words")
            record_answer(ws, "b", item_id, rater, "standard", items[item_id].answer if ok else wrong[item_id])
    with pytest.raises(CurateError, match="final"):
        record_answer(ws, "b", first, plan.assignments[first][0], "standard", items[first].answer)
    with pytest.raises(PermissionDenied):
        record_answer(ws, "b", first, "rev1", "open", "x")
    with ws.session() as s:
        opens = list(
            s.execute(
                select(BaselineAnswer).where(BaselineAnswer.form == "open", BaselineAnswer.campaign == "b")
            ).scalars()
        )
    graded = opens[0]
    record_grade(ws, graded.id or 0, "rev1", True)
    record_grade(ws, graded.id or 0, "judge:m", False)  # mean of the two graders: 0.5
    report = baseline_report(ws, "b", resamples=200, seed=0, confidence=0.9)

    groups: dict[str, list[str]] = {}
    for item_id in items:
        groups.setdefault(items[item_id].group_id, []).append(item_id)
    item_scores = [sum(right[(i, r)] for r in plan.assignments[i]) / 2 for i in items]
    group_scores = [
        sum(all(right[(i, r)] for i in members) for r in plan.assignments[members[0]]) / 2
        for members in groups.values()
    ]
    standard = report["human"]["standard"]
    assert standard["acc_q"]["value"] == pytest.approx(sum(item_scores) / len(item_scores))
    assert standard["acc_g"]["value"] == pytest.approx(sum(group_scores) / len(group_scores))
    assert standard["acc_q"]["ci"]["by"] == "unit" and standard["acc_q"]["ci"]["resamples"] == 200
    assert standard["acc_q"]["ci"]["low"] <= standard["acc_q"]["value"] <= standard["acc_q"]["ci"]["high"]
    opened = report["human"]["open_ended"]
    assert opened["scored_items"] == 1 and opened["ungraded"] == len(opens) - 1
    assert opened["acc_q"]["value"] == pytest.approx(0.5)
    counts = {i: len(items[i].options) for i in items}
    assert report["random"]["subset"]["acc_q"] == pytest.approx(sum(1 / n for n in counts.values()) / len(counts))
    assert random_baseline({"a": 4, "b": 2, "c": 4}, {"a": "g", "b": "g", "c": "h"}) == {
        "acc_q": pytest.approx((0.25 + 0.5 + 0.25) / 3),
        "acc_g": pytest.approx((0.125 + 0.25) / 2),
        "items": 3,
        "groups": 2,
    }


def test_the_cli_creates_imports_grades_and_reports(demo_workspace: Workspace, tmp_path: Path) -> None:
    root = str(demo_workspace.root)
    run = CliRunner().invoke
    created = run(
        app,
        [
            "-w",
            root,
            "baseline",
            "create",
            "cli-hb",
            "--size",
            "3",
            "--raters",
            "2",
            "--seed",
            "5",
            "--pool",
            "all",
            "--json",
        ],
    )
    assert created.exit_code == 0, created.output
    plan = json.loads(created.stdout)
    lines = []
    with demo_workspace.session() as s:
        for item_id, raters in plan["raters"].items():
            label = s.get(Item, item_id).answer  # type: ignore[union-attr]
            for rater in raters:
                lines += [{"item": item_id, "rater": rater, "form": "open", "answer": "x"},
                          {"item": item_id, "rater": rater, "form": "standard", "answer": label}]  # fmt: skip
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(lines[0]) + "\n" + json.dumps({**lines[1], "form": "multiple"}) + "\n")
    refused = run(app, ["-w", root, "baseline", "import", "cli-hb", str(bad)])
    assert refused.exit_code == 2 and "bad.jsonl:2" in refused.output
    good = tmp_path / "answers.jsonl"
    good.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert run(app, ["-w", root, "baseline", "import", "cli-hb", str(good)]).exit_code == 0
    judge = tmp_path / "judge.jsonl"
    judge.write_text(
        "".join(
            json.dumps({"key": f"baseline:cli-hb:{line['item']}:{line['rater']}", "output": "Incorrect."}) + "\n"
            for line in lines
            if line["form"] == "open"
        )  # fmt: skip
    )
    assert run(app, ["-w", root, "baseline", "grade", "cli-hb", "--judge", f"replay:{judge}"]).exit_code == 0
    report = run(app, ["-w", root, "baseline", "report", "cli-hb", "--json"])
    assert report.exit_code == 0, report.output
    document = json.loads(report.stdout)
    assert document["human"]["standard"]["acc_q"]["value"] == 1.0
    assert document["human"]["open_ended"]["acc_q"]["value"] == 0.0
    table = run(app, ["-w", root, "baseline", "report", "cli-hb"])
    assert "human standard" in table.stdout and "random (pool)" in table.stdout


def test_an_answer_to_an_item_changed_since_is_stale_not_scored(demo_workspace: Workspace, tmp_path: Path) -> None:
    from curation.items import import_items
    from omnicurate.demo import DATA

    ws = demo_workspace
    plan = create_campaign(ws, "b", size=12, raters_per_item=1, seed=0, pool="all", raters=["rev5", "rev6", "maya"])
    item_id = plan.campaign.items[0]
    rater = plan.assignments[item_id][0]
    record_answer(ws, "b", item_id, rater, "open", "words")
    record_answer(ws, "b", item_id, rater, "standard", ws.item(item_id).answer)
    assert baseline_report(ws, "b", 10, 0, 0.9)["human"]["standard"]["scored_items"] == 1
    shutil.copytree(DATA / "media", tmp_path / "media")
    rows = [json.loads(line) for line in (DATA / "items.jsonl").read_text().splitlines()]
    changed = next(r for r in rows if r["id"] == item_id)
    changed["question"] += " (reworded)"
    (tmp_path / "items.jsonl").write_text(json.dumps(changed) + "\n")
    import_items(ws, tmp_path / "items.jsonl")
    standard = baseline_report(ws, "b", 10, 0, 0.9)["human"]["standard"]
    assert standard["stale"] == 1 and standard["scored_items"] == 0 and standard["acc_q"]["value"] is None
