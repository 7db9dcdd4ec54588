"""A judge_task workspace ready for annotation: tasks (with video), drafts, final checklists, reviewed
responses and samples, built once per session and copied for each test."""

from __future__ import annotations

import shutil
from pathlib import Path

from ui_helpers import PASSWORD

from curation.workspace import Workspace

PEOPLE = {"ann1": ["reviewer"], "ann2": ["reviewer"], "ann3": ["reviewer"], "maya": ["maintainer", "reviewer"]}


def build_judge_template(root: Path, tasks: tuple[str, ...] | None = None) -> Path:
    from checker.drafting import ReplayDrafter, draft_checklists
    from curation.kinds.judge import draft_store, record_store, sample_store, task_store
    from curation.kinds.judge.checklists import first_per_rubric
    from curation.kinds.judge.schema import ChecklistSelectionRecord, ResponseReviewRecord
    from omnicurate.demo.judge_sources import write_sources

    ws = Workspace.init(root / "ws")
    for name, roles in PEOPLE.items():
        ws.add_person(name, roles)
        ws.set_password(name, PASSWORD)
    sources = write_sources(root / "src")
    if tasks is not None:
        for name in ("tasks", "responses", "drafts"):
            lines = sources[name].read_text().splitlines()
            keep = [x for x in lines if any(f'"{t}"' in x for t in tasks)]
            sources[name].write_text("\n".join(keep) + "\n")
    task_store.import_tasks(ws, sources["tasks"])
    task_store.import_responses(ws, sources["responses"])
    draft_checklists(ws, ReplayDrafter(str(sources["drafts"])))
    for task in task_store.tasks(ws):
        ids = first_per_rubric(draft_store.drafted_candidates(ws, task.id))
        for stage, who in (("checklist_curation", "ann3"), ("checklist_crosscheck", "maya")):
            record_store.record_selection(
                ws, ChecklistSelectionRecord(task=task.id, stage=stage, reviewer=who, selected=ids)
            )
    for r in task_store.responses(ws):
        record_store.record_response_review(ws, ResponseReviewRecord(response=r.id, reviewer="ann3", usable=True))
    sample_store.build_samples(ws)
    ws.close()
    return root / "ws"


def copy_workspace(template: Path, target: Path) -> Workspace:
    shutil.copytree(template, target)
    return Workspace.open(target)
