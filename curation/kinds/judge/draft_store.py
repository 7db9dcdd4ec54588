# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""The drafting cache: each model's checklist draft of a task, kept by input, model and prompt, so a rerun
asks the model nothing it answered before; the drafted entries are what curation selects from."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from curation.workspace import Workspace

from .schema import ChecklistEntry
from .tables import JudgeDraft


def cached_draft(ws: Workspace, input_hash: str, model: str, prompt_sha256: str) -> dict[str, Any] | None:
    with ws.session() as s:
        row = s.execute(
            select(JudgeDraft.output).where(
                JudgeDraft.input_hash == input_hash,
                JudgeDraft.model == model,
                JudgeDraft.prompt_sha256 == prompt_sha256,
            )
        ).first()
    return None if row is None else row[0]


def store_draft(
    ws: Workspace, task_id: str, input_hash: str, model: str, prompt_sha256: str, output: dict[str, Any]
) -> None:
    with ws.writing() as s:
        found = s.execute(
            select(JudgeDraft.id).where(
                JudgeDraft.input_hash == input_hash,
                JudgeDraft.model == model,
                JudgeDraft.prompt_sha256 == prompt_sha256,
            )
        ).first()
        if found is None:
            s.add(
                JudgeDraft(task=task_id, input_hash=input_hash, model=model, prompt_sha256=prompt_sha256, output=output)
            )


def drafted_candidates(ws: Workspace, task_id: str) -> list[ChecklistEntry]:
    """The entries of every draft stored for the task (the latest first wins an id), in rubric order."""
    with ws.session() as s:
        rows = list(
            s.execute(select(JudgeDraft).where(JudgeDraft.task == task_id).order_by(JudgeDraft.id.desc())).scalars()
        )
    entries: dict[str, ChecklistEntry] = {}
    for row in rows:
        for raw in row.output.get("entries", []):
            entry = ChecklistEntry.model_validate(raw)
            entries.setdefault(entry.id, entry)
    return list(entries.values())
