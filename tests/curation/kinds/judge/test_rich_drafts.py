"""Drafts of any size per rubric (issue 46, row 1): a model's draft with seven questions in every rubric is stored
whole, the curator selects six of each (seven stays refused), and ``[judge] draft_shown`` caps what
`curate judge checklist show` and the curation page show, never what a record may select."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from checker.drafting import ReplayDrafter, draft_checklists
from curation.config import CONFIG_NAME, Settings
from curation.errors import ValidationFailed
from curation.kinds.judge import draft_store, record_store, task_store
from curation.kinds.judge.checklists import shown_per_rubric
from curation.kinds.judge.rubrics import RUBRICS
from curation.kinds.judge.schema import ChecklistSelectionRecord
from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.judge_sources import write_sources

TASK = "t2t-01"
PER_RUBRIC = 7


def seven_per_rubric(ws: Workspace, folder: Path) -> None:
    sources = write_sources(folder)
    task_store.import_tasks(ws, sources["tasks"])
    line = {
        "task": TASK,
        "model": "gemini-1.5-pro",
        "checklist": {r: [f"Is the {r} of the haiku right, way {n}?" for n in range(PER_RUBRIC)] for r in RUBRICS},
    }
    drafts = folder / "rich.jsonl"
    drafts.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert draft_checklists(ws, ReplayDrafter(str(drafts)), [TASK]).drafted == [TASK]
    for name in ("ann1", "ann2"):
        ws.add_person(name, ["reviewer"])


def test_a_seven_per_rubric_draft_is_curated_to_six(workspace: Workspace, tmp_path: Path) -> None:
    seven_per_rubric(workspace, tmp_path / "src")
    candidates = draft_store.drafted_candidates(workspace, TASK)
    per_rubric = {r: [e.id for e in candidates if e.rubric == r] for r in RUBRICS}
    assert {r: len(ids) for r, ids in per_rubric.items()} == dict.fromkeys(RUBRICS, PER_RUBRIC), "stored whole"

    seven = [i for ids in per_rubric.values() for i in ids]
    with pytest.raises(ValidationFailed, match="relevance: 7 entries chosen; select 1 to 6 per rubric"):
        record_store.record_selection(
            workspace, ChecklistSelectionRecord(task=TASK, stage="checklist_curation", reviewer="ann1", selected=seven)
        )
    six = [i for ids in per_rubric.values() for i in ids[1:]]  # the last six of each rubric: past any cap shown
    state = record_store.record_selection(
        workspace, ChecklistSelectionRecord(task=TASK, stage="checklist_curation", reviewer="ann1", selected=six)
    )
    assert state.state == "curated"
    assert state.curation is not None
    curated = state.curation.checklist
    assert len(curated) == 6 * len(RUBRICS)
    assert {r: sum(e.rubric == r for e in curated) for r in RUBRICS} == dict.fromkeys(RUBRICS, 6)


def test_draft_shown_caps_what_is_shown_not_what_is_selected(workspace: Workspace, tmp_path: Path) -> None:
    seven_per_rubric(workspace, tmp_path / "src")
    candidates = draft_store.drafted_candidates(workspace, TASK)
    shown, hidden = shown_per_rubric(candidates, 3)
    assert len(shown) == 3 * len(RUBRICS) and hidden == dict.fromkeys(RUBRICS, PER_RUBRIC - 3)
    assert [e.id for e in shown if e.rubric == "clarity"] == [e.id for e in candidates if e.rubric == "clarity"][:3]

    path = workspace.root / CONFIG_NAME
    settings = Settings.load(path)
    settings.judge.draft_shown = 3
    settings.save(path)
    runner = CliRunner()
    root = ["-w", str(workspace.root), "judge", "checklist", "show", TASK]
    listed = json.loads(runner.invoke(app, [*root, "--json"], catch_exceptions=False).stdout)["entries"]
    assert len(listed) == PER_RUBRIC * len(RUBRICS), "--json lists every entry a record may name"
    assert sum(e["shown"] for e in listed) == 3 * len(RUBRICS)
    table = runner.invoke(app, root, catch_exceptions=False)
    assert table.exit_code == 0, table.output
    assert "not shown (past [judge] draft_shown per rubric): 4 relevance" in " ".join(table.stdout.split())
    hidden_id = next(e["id"] for e in listed if not e["shown"])
    assert hidden_id not in table.stdout
    assert hidden_id in runner.invoke(app, [*root, "--all"], catch_exceptions=False, terminal_width=300).stdout
