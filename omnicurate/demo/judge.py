"""``curate demo --kind judge``: candidate queries audited, screened, refined and promoted to a dozen any-to-any
tasks (text, image, audio, video), replayed checklist
drafts, curation and a blind cross-check (two disagreements adjudicated), response review, score and pair
samples, three annotators' scores and choices, a judge run twice through a replay backend (Checklist
setting, pairs in both orders), two replayed judges' outputs, the report and a release.

Running it twice changes nothing: imports are idempotent, drafts come from the cache, records and
annotations are the same, and the release rebuilds to the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import DEMO_PASSWORD

PEOPLE = {
    "ann1": ["reviewer"],
    "ann2": ["reviewer"],
    "ann3": ["reviewer"],
    "rev1": ["reviewer"],
    "maya": ["maintainer", "reviewer"],
}
PER_RUBRIC = {"relevance": 2, "trustworthiness": 2, "creativity": 1, "clarity": 2, "coherence": 1, "completeness": 2}
"""The curator's selection per rubric: 1-6 from each rubric's drafted entries (10 per task, 11 with the added one)."""
DISAGREE = ("i2t-02", "v2a-01")
"""Tasks whose cross-checker keeps other entries than the curator: a maintainer adjudicates them."""
UNUSABLE = {"t2t-01:sys-c": (False, "off-topic: does not attempt the haiku"), "t2v-01:sys-c": (True, "NSFW frame")}
VERSION = "1.0.0"


def build_judge_demo(directory: Path, log: Callable[[str], None] = print):  # type: ignore[no-untyped-def]
    from checker.drafting import ReplayDrafter, draft_checklists
    from curation.kinds.judge import annotation_store, draft_store, output_store, record_store, sample_store, task_store
    from curation.kinds.judge.checklists import first_per_rubric
    from curation.kinds.judge.schema import ChecklistAdjudicationRecord, ChecklistSelectionRecord, ResponseReviewRecord
    from curation.workspace import Workspace
    from exports.judge_release import build_judge_release

    from .judge_pipeline import curate_queries, run_demo_judge
    from .judge_sources import ANNOTATORS, human_choices, human_scores, judge_outputs, write_sources

    ws = Workspace.init(directory)
    log(f"workspace: {ws.root}")
    known = {p.name for p in ws.people()}
    for name, roles in PEOPLE.items():
        if name not in known:
            ws.add_person(name, roles, email=f"{name}@demo.omnicurate.org", actor="demo")
            ws.set_password(name, DEMO_PASSWORD, actor="demo")
    log(f"people: {', '.join(PEOPLE)} (UI password: {DEMO_PASSWORD})")
    sources = write_sources(ws.root / "demo-sources")
    curate_queries(ws, sources["tasks"], log)
    log(f"responses: {task_store.import_responses(ws, sources['responses'], actor='demo').summary()}")
    run = draft_checklists(ws, ReplayDrafter(str(sources["drafts"])))
    log(f"checklist drafts (replayed): {len(run.drafted)} drafted, {len(run.cached)} from the cache")

    for task in task_store.tasks(ws):
        entries = draft_store.drafted_candidates(ws, task.id)
        picked = first_per_rubric(entries, PER_RUBRIC)
        edits = (
            [{"entry": entries[3].id, "text": entries[3].text.replace("?", " or the input?")}]
            if task.id.startswith("v2")
            else []
        )
        added = (
            [{"rubric": "coherence", "text": "Does the output keep one consistent style?"}]
            if task.output != "text"
            else []
        )
        record_store.record_selection(
            ws,
            ChecklistSelectionRecord(
                task=task.id, stage="checklist_curation", reviewer="ann1", selected=picked, edits=edits, added=added
            ),
        )
        candidates = record_store.task_checklist(ws, task.id).curation.candidates  # type: ignore[union-attr]
        chosen = [e.id for e in record_store.task_checklist(ws, task.id).curation.checklist]  # type: ignore[union-attr]
        if task.id in DISAGREE:
            chosen = [*chosen[:-1], next(e.id for e in candidates if e.id not in chosen)]
        record_store.record_selection(
            ws, ChecklistSelectionRecord(task=task.id, stage="checklist_crosscheck", reviewer="ann2", selected=chosen)
        )
    for task_id in DISAGREE:
        curated = [e.id for e in record_store.task_checklist(ws, task_id).curation.checklist]  # type: ignore[union-attr]
        record_store.record_adjudication(
            ws,
            ChecklistAdjudicationRecord(
                task=task_id, adjudicator="maya", selected=curated, reason="the curator's entry is specific to the task"
            ),
        )
    reviewed = task_store.responses(ws)
    for response in reviewed:
        nsfw, reason = UNUSABLE.get(response.id, (False, ""))
        record_store.record_response_review(
            ws, ResponseReviewRecord(response=response.id, reviewer="rev1", usable=not reason, reason=reason, nsfw=nsfw)
        )
    refused = [r for r in reviewed if r.id in UNUSABLE]
    log(
        f"response review: {len(reviewed) - len(refused)} usable, {len(refused)} refused ({', '.join(UNUSABLE[r.id][1] for r in refused)})"
    )
    added = sample_store.build_samples(ws)
    log(f"samples: +{added['score']} score, +{added['pair']} pair")
    for kind, make in (("score", human_scores), ("pair", human_choices)):
        for sample in sample_store.samples(ws, kind):
            for person in ANNOTATORS:
                annotation_store.save_annotation(ws, sample.id, person, make(sample.model_dump(), person), apply=True)  # type: ignore[arg-type]
    run_demo_judge(ws, ws.root / "demo-sources", log)
    judges = ws.root / "demo-sources" / "judge_outputs.jsonl"
    lines: list[dict[str, Any]] = []
    for kind in ("score", "pair"):
        lines += judge_outputs([s.model_dump() for s in sample_store.samples(ws, kind)], kind)
    judges.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    log(f"judge outputs (replayed): {output_store.import_judge_outputs(ws, judges).summary()}")
    result = build_judge_release(ws, VERSION, actor="demo", name="judge-demo", log=log)
    log(f"release {result.version}: {result.path} ({result.files} files{', unchanged' if result.unchanged else ''})")
    return ws
