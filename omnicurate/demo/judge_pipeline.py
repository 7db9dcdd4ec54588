"""The judge demo's query curation and judge run, as the paper's team ran them: candidate queries (the
dozen tasks plus a duplicate, an NSFW and a low-quality candidate) imported, audited, screened, one refined,
the kept ones promoted to tasks; and, once people have annotated, a judge run through a replay backend in
the Checklist setting, pairs in both orders, three samples each, twice (run-to-run consistency), with a few
answers that do not parse (recorded as invalid).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from curation.workspace import Workspace

from .judge_sources import QUALITY, _clip, _seed

EXTRA_QUERIES = [
    {"id": "t2t-01b", "instruction": "Write a haiku about autumn rain.", "output": "text", "source": "WildBench"},
    {"id": "t2i-90", "instruction": "Draw an explicit scene.", "output": "image", "source": "T2ICompBench"},
    {"id": "t2t-90", "instruction": "asdf qwer", "output": "text", "source": "WildBench"},
]
"""A duplicate of t2t-01 (held by the audit), an NSFW and a low-quality candidate (dropped by the screener)."""
DROPPED = {"t2i-90": "nsfw", "t2t-90": "low_quality"}
REFINED = ("t2t-02", "Explain to a ten-year-old why the sky is blue.", "the source's 'a child' leaves the age open")
JUDGE = "judge-omni"
RUNS = (1, 2)


def curate_queries(ws: Workspace, tasks_file: Path, log: Callable[[str], None]) -> None:
    """Candidate queries to tasks: import, audit, screen, refine, promote (a rerun changes nothing)."""
    from curation.kinds.judge.queries import import_queries, import_query_records, promote_queries, query_statuses

    candidates = tasks_file.parent / "queries.jsonl"
    lines = tasks_file.read_text(encoding="utf-8").splitlines()
    lines += [json.dumps({**q, "license": "CC-BY-4.0"}) for q in EXTRA_QUERIES]
    candidates.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log(f"queries: {_counts(import_queries(ws, candidates, actor='demo'))}")
    statuses = {s.id: s for s in query_statuses(ws)}
    held = {q: s.reasons for q, s in statuses.items() if s.state == "held"}
    records: list[dict[str, Any]] = [
        {"query": q, "stage": "query_screen", "reviewer": "rev1", "decision": "keep"}
        for q, s in statuses.items()
        if s.state in ("screen", "ready") and q not in DROPPED
    ]
    records += [
        {"query": q, "stage": "query_screen", "reviewer": "rev1", "decision": "drop", "reason": reason}
        for q, reason in DROPPED.items()
    ]
    query, instruction, why = REFINED
    records.append(
        {"query": query, "stage": "query_refine", "reviewer": "maya", "instruction": instruction, "why": why}
    )
    records = [r for r in records if statuses[r["query"]].state != "promoted"]  # a rerun: already tasks
    path = tasks_file.parent / "query_records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    import_query_records(ws, path)
    promoted = promote_queries(ws, actor="demo")
    states: dict[str, int] = {}
    for status in query_statuses(ws):
        states[status.state] = states.get(status.state, 0) + 1
    audit = "; ".join(f"{q} ({', '.join(reasons)})" for q, reasons in held.items()) or "none"
    log(f"query curation: held by the audit: {audit}; {_counts(states)}; promoted now {promoted['promoted']}")


def _answer(kind: str, sample: dict[str, Any], order: str, run: int, index: int) -> str:
    """A recorded Analyze-then-Judge answer: the systems' quality through the judge's noise; one in forty
    answers is prose instead of JSON (a parse failure the run records as invalid)."""
    seed = _seed(sample["id"], JUDGE, order, str(run), str(index))
    if seed % 40 == 0:
        return "The first response is clearly better, I would say."
    rng = np.random.default_rng(seed)
    from curation.kinds.judge.rubrics import CRITERIA

    answer: dict[str, Any] = {}
    for criterion in CRITERIA:
        if kind == "score":
            value = _clip(QUALITY[sample["system"]] + rng.normal(0, 0.8))
            answer[criterion] = {"comment": f"Weighed against the checklist: {value}.", "score": value}
        else:
            first, second = sample["first_system"], sample["second_system"]
            if order == "swapped":
                first, second = second, first
            gap = QUALITY[first] - QUALITY[second] + rng.normal(0, 1.0) + 0.3  # a slight first-position bias
            answer[criterion] = {
                "comment": "Compared side by side.",
                "choice": 0 if gap > 0.5 else 2 if gap < -0.5 else 1,
            }
    return json.dumps(answer)


def run_demo_judge(ws: Workspace, folder: Path, log: Callable[[str], None]) -> None:
    """Record the judge's answers as a replay file, then run it (twice) through `judge run`'s machinery."""
    from checker.generation import ReplayGenerator
    from curation.kinds.judge import sample_store
    from curation.kinds.judge.judging import SAMPLES, TEMPERATURE, JudgePrompt, run_judge

    lines = []
    for kind in ("score", "pair"):
        for sample in sample_store.samples(ws, kind):
            data = sample.model_dump()
            for order in ("shown",) if kind == "score" else ("shown", "swapped"):
                for run in RUNS:
                    for index in range(SAMPLES):
                        key = f"{sample.id}|checklist|{order}|{run}|{index}"
                        lines.append(
                            {"key": key, "model": "omni-judge-1", "output": _answer(kind, data, order, run, index)}
                        )
    replay = folder / "judge_runs.jsonl"
    replay.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    generator = ReplayGenerator(str(replay))

    def generate(key: str, prompt: JudgePrompt, index: int) -> str:
        return generator.generate(key, prompt.system, prompt.user, [], TEMPERATURE, index)

    for run in RUNS:
        result = run_judge(ws, JUDGE, generator.model_id, "checklist", generate, run=run)
        log(f"judge run {run} ({JUDGE}, checklist setting, replayed): {_counts(result.as_dict())}")


def _counts(counts: Mapping[str, object]) -> str:
    """``{"added": 15, "unchanged": 0}`` as people read it: ``15 added, 0 unchanged``."""
    return ", ".join(f"{n} {what}" for what, n in counts.items()) or "none"
