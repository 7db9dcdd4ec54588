"""The admission record of a judge_task release: each task's drafted candidates and its checklist-curation
records (curation, cross-check, adjudication; people pseudonymous), the checklist they derive, and the
re-derivation ``curate release reproduce`` runs on them with the judge kind's own rules
(``curation.kinds.judge.checklists.derive_task_checklist``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import select

from curation.errors import Problem, ValidationFailed
from curation.kinds.judge import draft_store, record_store
from curation.kinds.judge.checklists import TaskChecklist, derive_task_checklist, selection_agreement
from curation.kinds.judge.schema import ChecklistAdjudicationRecord, ChecklistEntry, ChecklistSelectionRecord
from curation.kinds.judge.tables import JudgeRecord
from curation.pseudonyms import RULE, Pseudonyms, workspace_key
from curation.workspace import Workspace

from .admission_lines import DAMAGED, read_settings
from .admission_record import FILES, FORMAT, platform_version, read_lines
from .writer import ReleaseWriter, jsonl_bytes

KIND = "judge_task"
TASKS = FILES["tasks"]
PEOPLE_FIELDS = ("reviewer", "adjudicator")
"""Payload fields naming a person."""
PAYLOAD_MODELS: dict[str, type[BaseModel]] = {
    "checklist_curation": ChecklistSelectionRecord,
    "checklist_crosscheck": ChecklistSelectionRecord,
    "checklist_adjudication": ChecklistAdjudicationRecord,
}
"""The record model of each checklist-curation stage a task line's records are re-derived with."""


def _outcome(checklist: TaskChecklist) -> dict[str, Any]:
    return {
        "state": checklist.state,
        "final": [{"id": e.id, "rubric": e.rubric, "text": e.text} for e in checklist.final],
        "disagreements": len(checklist.disagreements),
    }


def write_judge_admission_record(
    writer: ReleaseWriter, ws: Workspace, version: str, rejected: bool = True
) -> dict[str, Any]:
    """Write ``admission/`` for a judge release; returns what the card says about it."""
    pseudonym = Pseudonyms(workspace_key(ws.root), version)
    with ws.session() as s:
        rows = list(s.execute(select(JudgeRecord).order_by(JudgeRecord.id)).scalars())  # type: ignore[arg-type]
    by_task: dict[str, list[JudgeRecord]] = {}
    for r in rows:
        if r.stage.startswith("checklist_"):
            by_task.setdefault(r.subject, []).append(r)
    checklists = {c.task: c for c in record_store.task_checklists(ws)}
    lines = []
    for task in sorted(checklists):
        released = checklists[task].state == "final"
        if not released and not rejected:
            continue
        records = []
        for r in by_task.get(task, []):
            payload = {
                k: pseudonym(v) if k in PEOPLE_FIELDS and isinstance(v, str) else v for k, v in r.payload.items()
            }
            records.append({"id": r.id, "stage": r.stage, "reviewer": pseudonym(r.reviewer), "payload": payload})
        lines.append(
            {
                "task": task,
                "released": released,
                "candidates": [e.model_dump(mode="json") for e in draft_store.drafted_candidates(ws, task)],
                "records": records,
                "outcome": _outcome(checklists[task]),
            }
        )
    settings = {
        "format": FORMAT,
        "platform": {"name": "omnicurate", "version": platform_version()},
        "kind": KIND,
        "pseudonyms": RULE,
        "rejected": "included" if rejected else "left out by the maintainer",
        "files": {TASKS: "per task: drafted candidates, checklist-curation records, the derived checklist"},
    }
    writer.write_json(FILES["settings"], settings)
    writer.write_bytes(TASKS, jsonl_bytes(lines))
    people = {r["reviewer"] for line in lines for r in line["records"]}
    return {
        "kind": KIND,
        "units": len(lines),
        "records": sum(len(line["records"]) for line in lines),
        "attested": 0,
        "not_attested": [],
        "rejected": rejected,
        "rejected_file": TASKS,
        "authors": f"not applicable ({len(people)} curator(s) and cross-checker(s), pseudonymous)",
    }


def reproduce_judge(folder: Path, differences: list[str], notes: list[str]) -> tuple[int, int]:
    """Re-derive every task's checklist and the selection agreement; returns (tasks, records)."""
    settings = read_settings(folder, FILES["settings"])
    rows = read_lines(folder, TASKS)
    derived, problems = [], []
    for n, row in rows:
        try:
            checklist = _derive(row)
        except _Damaged as exc:
            problems.append(Problem(exc.message, exc.field, n, TASKS))
            continue
        derived.append((n, row, checklist))
    if problems:
        raise ValidationFailed(problems, DAMAGED)
    for n, row, checklist in derived:
        mine = _outcome(checklist)
        if json.dumps(mine, sort_keys=True) != json.dumps(row["outcome"], sort_keys=True):
            differences.append(f"{TASKS}:{n}: {row['task']}: recorded {row['outcome']}, re-derived {mine}")
        if row["released"] != (mine["state"] == "final"):
            differences.append(f"{TASKS}:{n}: {row['task']}: released={row['released']}, re-derived {mine['state']!r}")
    shipped = {str(c.get("task")): (n, c) for n, c in read_lines(folder, "data/checklists.jsonl")}
    for n, row in rows:
        if not row["released"]:
            continue
        if row["task"] not in shipped:
            differences.append(f"{TASKS}:{n}: {row['task']}: released, but not in data/checklists.jsonl")
            continue
        m, entry = shipped[row["task"]]
        given = entry.get("entries")
        entries = given if isinstance(given, list) else []
        texts = [{k: e.get(k) for k in ("id", "rubric", "text")} for e in entries if isinstance(e, dict)]
        if texts != row["outcome"]["final"]:
            differences.append(f"data/checklists.jsonl:{m}: {row['task']}: entries differ from {TASKS}:{n}")
    released = {row["task"] for _, row in rows if row["released"]}
    for task in sorted(set(shipped) - released):
        differences.append(f"data/checklists.jsonl:{shipped[task][0]}: {task}: shipped, but not admitted in {TASKS}")
    agreement_path = folder / "agreement.json"
    if settings.get("rejected") != "included":
        notes.append("the not-released tasks were left out, so the selection agreement is not recomputed")
    elif agreement_path.exists():
        try:
            recorded = json.loads(agreement_path.read_text(encoding="utf-8")).get("checklist_selection")
        except (ValueError, AttributeError, RecursionError):
            differences.append("agreement.json: not a JSON object")
            return len(rows), sum(len(row["records"]) for _, row in rows)
        mine_agreement = json.loads(json.dumps(selection_agreement([c for _, _, c in derived])))
        if json.dumps(recorded, sort_keys=True) != json.dumps(mine_agreement, sort_keys=True):
            differences.append(f"agreement.json: checklist_selection: recorded {recorded}, recomputed {mine_agreement}")
    return len(rows), sum(len(row["records"]) for _, row in rows)


class _Damaged(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def _derive(row: dict[str, Any]) -> TaskChecklist:
    """A task line's checklist, re-derived; a candidate or record that no longer makes one raises
    :class:`_Damaged` naming the field."""
    candidates = []
    for i, c in enumerate(row["candidates"]):
        try:
            candidates.append(ChecklistEntry.model_validate(c))
        except ValidationError as exc:
            raise _Damaged(_where(f"candidates.{i}", exc), _message(exc)) from exc
    for i, r in enumerate(row["records"]):
        model = PAYLOAD_MODELS.get(r["stage"])
        if model is not None:
            try:
                model.model_validate(r["payload"])
            except ValidationError as exc:
                raise _Damaged(_where(f"records.{i}.payload", exc), _message(exc)) from exc
    payloads = {r["stage"]: r["payload"] for r in sorted(row["records"], key=lambda r: r["id"])}
    try:
        return derive_task_checklist(row["task"], candidates, payloads)
    except (KeyError, TypeError, ValueError) as exc:
        what = f"refers to {exc.args[0]}, which the task lacks" if isinstance(exc, KeyError) and exc.args else str(exc)
        raise _Damaged("records", f"the checklist cannot be re-derived: a record {what}") from exc


def _where(prefix: str, exc: ValidationError) -> str:
    loc = ".".join(str(p) for p in exc.errors()[0]["loc"])
    return f"{prefix}.{loc}" if loc else prefix


def _message(exc: ValidationError) -> str:
    err = exc.errors()[0]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return (
        "required field is missing" if err["type"] == "missing" else err["msg"].removeprefix("Value error, ")
    ) + more
