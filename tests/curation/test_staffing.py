"""``staffing:<stage>``: a pool too small for the separation rule is told, by name, which stage it cannot
staff and the smallest change that fixes it (``curate status``, ``curate funnel``), on SQLite and PostgreSQL.
The dashboard's side is in ``tests/annotation_ui/test_ui_logic.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.workspace import Workspace
from tests.curation.test_pool_of_five import pool_workspace


@pytest.mark.parametrize(
    ("pool", "stages", "fix"),
    [
        (("p1", "p2", "p3"), {"subset_checklist", "answer_check", "group_integration"}, "add 2 reviewers"),
        (("p1", "p2", "p3", "p4"), {"group_integration"}, "add 1 reviewer"),
    ],
)
def test_a_pool_too_small_for_the_rule_is_told_what_to_add(
    workspace: Workspace, tmp_path: Path, pool: tuple[str, ...], stages: set[str], fix: str
) -> None:
    cli = pool_workspace(workspace, tmp_path, pool)
    status = cli.status()
    for item in ("a", "b"):
        assert status[item]["state"] == "in_review", "a heads-up: the state stays"
        assert {r.removeprefix("staffing:") for r in status[item]["reasons"] if r.startswith("staffing:")} == stages
    text = cli("status")
    assert text.exit_code == 0 and fix in text.output and "staffing:" in text.output
    funnel = cli("funnel", "--json")
    assert funnel.exit_code == 0
    rows = json.loads(funnel.stdout)["staffing"]
    assert {row["stage"] for row in rows} == stages and all(row["fix"].startswith(fix) for row in rows)
    assert fix in cli("funnel").output
    for name in ("p6", "p7")[: int(fix.split()[1])]:
        assert cli("people", "add", name, "-r", "reviewer").exit_code == 0
    assert not any(r.startswith("staffing:") for st in cli.status().values() for r in st["reasons"])


def test_author_only_is_named_when_it_alone_would_staff_the_items(workspace: Workspace, tmp_path: Path) -> None:
    cli = pool_workspace(workspace, tmp_path, ("p1", "p2", "p3", "p4"))
    assert "author_only" in cli("status").output, "three reviewers can staff every stage without TRIAD's letters"
    workspace.settings.review.separation = "author_only"
    workspace.settings.save(workspace.root / "curate.toml")
    assert not any(r.startswith("staffing:") for st in cli.status().values() for r in st["reasons"])


def test_a_pool_of_five_whose_reviewers_all_saw_the_labels_needs_one_blind_checker(
    workspace: Workspace, tmp_path: Path
) -> None:
    cli = pool_workspace(workspace, tmp_path)
    for person in ("p3", "p4", "p5"):
        assert cli("export", "items", str(tmp_path / f"{person}.jsonl"), "--by", person).exit_code == 0
    status = cli.status()
    assert [r for r in status["a"]["reasons"] if r.startswith("staffing:")] == [], "p2 can still check blind"
    assert cli("export", "items", str(tmp_path / "p2.jsonl"), "--by", "p2").exit_code == 0
    status = cli.status()
    for item in ("a", "b"):
        assert [r for r in status[item]["reasons"] if r.startswith("staffing:")] == ["staffing:answer_check"]
    assert status["c"]["reasons"] == [], "p1 wrote no sister of c and saw nothing: p1 can check c blind"
    (row,) = json.loads(cli("funnel", "--json").stdout)["staffing"]
    assert (row["items"], row["fix"]) == (["a", "b"], "add 1 reviewer"), "author_only would not unsee a label"
