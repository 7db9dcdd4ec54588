"""``curate baseline import``: answers given outside the app and people's grades, one JSON object per line.

An answer line is ``{"item", "rater", "form": "open"|"standard", "answer"}``; a grade line is ``{"item", "rater",
"grader", "correct": true|false}`` (it grades that rater's open-ended answer). The file is taken whole or not
at all; every refused line is named as FILE:LINE.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import select
from sqlmodel import col

from ..errors import CurateError, Problem, ValidationFailed
from ..jsonl import read_lines
from ..reference_tables import BaselineAnswer
from ..workspace import Workspace
from .campaign import record_answer, record_grade


class AnswerLine(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    item: str = Field(min_length=1, max_length=200)
    rater: str = Field(min_length=1, max_length=200)
    form: Literal["open", "standard"]
    answer: str = Field(max_length=2000)


class GradeLine(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    item: str = Field(min_length=1, max_length=200)
    rater: str = Field(min_length=1, max_length=200)
    grader: str = Field(min_length=1, max_length=200)
    correct: bool


class _Refused(Exception):
    """Ends the import's transaction, so that nothing of a refused file is kept."""


def import_lines(ws: Workspace, campaign: str, path: Path) -> dict[str, int]:
    """Store every line of ``path``, or none (ValidationFailed naming each refused line)."""
    problems: list[Problem] = []
    counts = {"answers": 0, "grades": 0}
    try:
        with ws.all_or_nothing() as session:
            for number, raw in read_lines(path):
                where = {"file": str(path), "line": number}
                if isinstance(raw, Problem):
                    problems.append(raw)
                    continue
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw)
                    line: AnswerLine | GradeLine = (
                        GradeLine.model_validate(data) if isinstance(data, dict) and "grader" in data
                        else AnswerLine.model_validate(data)
                    )  # fmt: skip
                    if isinstance(line, AnswerLine):
                        counts["answers"] += record_answer(
                            ws, campaign, line.item, line.rater, line.form, line.answer, "import"
                        )
                    else:
                        answer_id = session.execute(
                            select(col(BaselineAnswer.id)).where(
                                col(BaselineAnswer.campaign) == campaign,
                                col(BaselineAnswer.item_id) == line.item,
                                col(BaselineAnswer.rater) == line.rater,
                                col(BaselineAnswer.form) == "open",
                            )
                        ).scalar_one_or_none()
                        if answer_id is None:
                            raise CurateError(f"{line.rater!r} has no open-ended answer to {line.item!r} to grade")
                        record_grade(ws, answer_id, line.grader, line.correct, actor="import")
                        counts["grades"] += 1
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    problems.append(Problem(f"not JSON: {exc}", **where))  # type: ignore[arg-type]
                except ValidationError as exc:
                    for err in exc.errors():
                        problems.append(Problem(err["msg"], field=".".join(str(p) for p in err["loc"]), **where))  # type: ignore[arg-type]
                except CurateError as exc:
                    problems.append(Problem(str(exc), **where))  # type: ignore[arg-type]
            if problems:
                raise _Refused
    except _Refused:
        raise ValidationFailed(problems, "fix the file; nothing was imported") from None
    return counts
