# Each record is parsed by its stage's model, so mypy sees a BaseModel where the stage's function takes that model.
# mypy: disable-error-code="arg-type"
"""Stage records from a file (``curate judge import records``): checked line by line, then applied
stage by stage through the same rules as the app, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from curation.errors import NotFoundError, PermissionDenied, Problem, ValidationFailed
from curation.workspace import Workspace

from .importing import _refuse
from .record_store import ADJUDICATION, record_adjudication, record_response_review, record_selection
from .schema import ChecklistAdjudicationRecord, ChecklistSelectionRecord, ResponseReviewRecord

_RECORD_ORDER = ("checklist_curation", "checklist_crosscheck", ADJUDICATION, "response_review")


def import_records(ws: Workspace, path: Path) -> dict[str, int]:
    """Import stage records (checklist curation, cross-check, adjudication, response review).

    Every line is checked against its schema first (all problems at once, nothing recorded). Records are
    then applied stage by stage in one transaction; one that breaks a rule (bounds, separation) refuses the
    import with its line named, and nothing of the file is kept.
    """
    from pydantic import ValidationError

    from curation.jsonl import pydantic_problems, read_jsonl

    file, problems = str(path), list[Problem]()
    models: dict[str, type[BaseModel]] = {
        "checklist_curation": ChecklistSelectionRecord,
        "checklist_crosscheck": ChecklistSelectionRecord,
        ADJUDICATION: ChecklistAdjudicationRecord,
        "response_review": ResponseReviewRecord,
    }
    parsed: list[tuple[int, str, BaseModel]] = []
    first: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}
    for number, obj in read_jsonl(path):
        if isinstance(obj, Problem):
            problems.append(obj)
            continue
        stage = obj.get("stage")
        if not isinstance(stage, str) or stage not in models:  # a list or an object is no stage (nor hashable)
            given = "required field is missing" if stage is None else f"unknown stage {json.dumps(stage)[:60]}"
            problems.append(Problem(f"{given}; stages are {', '.join(models)}", "stage", number, file))
            continue
        data = {k: v for k, v in obj.items() if not (stage == ADJUDICATION and k == "stage")}
        try:
            record = models[stage].model_validate(data)
        except ValidationError as exc:
            problems += pydantic_problems(exc, file, number)
            continue
        subject = getattr(record, "task", None) or getattr(record, "response", None)
        key = (subject, stage, getattr(record, "reviewer", None) or getattr(record, "adjudicator", None))
        earlier = first.setdefault(key, (number, record.model_dump()))
        if earlier[0] != number and earlier[1] != record.model_dump():  # the later would win silently
            message = f"contradicts line {earlier[0]} (same {subject}, stage and reviewer); keep one of the two"
            problems.append(Problem(message, "reviewer", number, file))
            continue
        parsed.append((number, stage, record))
    _refuse(problems, file)
    counts = dict.fromkeys(_RECORD_ORDER, 0)
    with ws.all_or_nothing():  # a refused line keeps nothing of the file
        for number, stage, record in sorted(parsed, key=lambda p: (_RECORD_ORDER.index(p[1]), p[0])):
            try:
                if stage == ADJUDICATION:
                    record_adjudication(ws, record)
                elif stage == "response_review":
                    record_response_review(ws, record)
                else:
                    record_selection(ws, record)
            except (ValidationFailed, NotFoundError, PermissionDenied) as exc:
                message = exc.problems[0].message if isinstance(exc, ValidationFailed) else str(exc)
                raise ValidationFailed([Problem(message, stage, number, file)], "nothing was imported") from exc
            counts[stage] += 1
    return counts
