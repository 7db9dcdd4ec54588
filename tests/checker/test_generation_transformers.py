"""`curate judge respond` and `curate judge run` through ``transformers:`` with the tiny random omni model (built
offline): a system answers text and image tasks (video ones are not offered to it), a judge's free text is
parsed strictly (a random model's babble is recorded as invalid, never repaired), seeds make a rerun of the
same call give the same text, and reruns add nothing."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select
from typer.testing import CliRunner

from checker.generation import open_generator
from curation.kinds.judge import draft_store, record_store, sample_store, task_store
from curation.kinds.judge.checklists import first_per_rubric
from curation.kinds.judge.schema import ChecklistSelectionRecord, ResponseReviewRecord
from curation.kinds.judge.tables import JudgeOutput
from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.judge_sources import write_sources

runner = CliRunner()
TASKS = ("t2t-01", "i2t-01")


def seeded(ws: Workspace, folder: Path) -> None:
    """Two tasks (text, text+image) with final checklists, reviewed responses and samples."""
    from checker.drafting import ReplayDrafter, draft_checklists

    sources = write_sources(folder)
    for name in ("tasks", "responses", "drafts"):
        keep = [x for x in sources[name].read_text().splitlines() if any(f'"{t}"' in x for t in TASKS)]
        sources[name].write_text("\n".join(keep) + "\n")
    for name in ("ann1", "ann2"):
        ws.add_person(name, ["reviewer"])
    task_store.import_tasks(ws, sources["tasks"])
    task_store.import_responses(ws, sources["responses"])
    draft_checklists(ws, ReplayDrafter(str(sources["drafts"])))
    for task in TASKS:
        chosen = first_per_rubric(draft_store.drafted_candidates(ws, task))
        for stage, who in (("checklist_curation", "ann1"), ("checklist_crosscheck", "ann2")):
            record_store.record_selection(
                ws, ChecklistSelectionRecord(task=task, stage=stage, reviewer=who, selected=chosen)
            )
    for r in task_store.responses(ws):
        record_store.record_response_review(ws, ResponseReviewRecord(response=r.id, reviewer="ann2", usable=True))
    sample_store.build_samples(ws)


def test_a_tiny_model_answers_and_judges(workspace: Workspace, tiny_omni: Path, tmp_path: Path) -> None:
    seeded(workspace, tmp_path / "src")
    root = ["-w", str(workspace.root)]
    backend = f"transformers:{tiny_omni}"
    args = [*root, "judge", "respond", "--system", "tiny", "--backend", backend, "--accepts", "text,image"]
    done = runner.invoke(app, [*args, "--temperature", "0.7", "--seed", "5", "--json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert sorted(json.loads(done.stdout)["answered"]) == sorted(TASKS)
    answer = {r.id: r.text for r in task_store.responses(workspace)}["i2t-01:tiny"]
    assert isinstance(answer, str) and answer, "the model's text is the response, as generated"
    again = runner.invoke(app, [*args, "--json"], catch_exceptions=False)
    assert json.loads(again.stdout)["answered"] == []

    generator = open_generator(backend)
    image = [("image", workspace.asset_path(next(iter(_assets(workspace)))))]
    first = generator.generate("k", "Be brief.", "Describe it.", image, 0.7, 11)
    assert generator.generate("k", "Be brief.", "Describe it.", image, 0.7, 11) == first, "the seed decides"

    judge = [*root, "judge", "run", "--judge", "tiny", "--backend", backend, "--setting", "overall", "--samples", "1"]
    done = runner.invoke(app, [*judge, "--json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    samples = len(sample_store.samples(workspace, "score")) + len(sample_store.samples(workspace, "pair"))
    assert result["judged"] == samples and result["answers"] == len(sample_store.samples(workspace, "score")) + 2 * len(
        sample_store.samples(workspace, "pair")
    )
    assert result["invalid"] == result["answers"], "a random model's babble is never a valid JSON judgment"
    with workspace.session() as s:
        payloads = list(s.execute(select(JudgeOutput.payload).where(JudgeOutput.judge == "tiny/overall")).scalars())
    assert len(payloads) == samples and all(p["runs"]["1"]["raw"] for p in payloads)
    assert json.loads(runner.invoke(app, [*judge, "--json"]).stdout)["cached"] == samples


def _assets(ws: Workspace) -> list:
    from curation.tables import Asset

    with ws.session() as s:
        return list(s.execute(select(Asset).where(Asset.kind == "image")).scalars())
