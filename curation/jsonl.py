"""Reading JSON Lines with errors that name the file, the line and the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import Problem, ValidationFailed

Model = TypeVar("Model", bound=BaseModel)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | Problem]]:
    """Yield ``(line_number, object)`` or ``(line_number, Problem)``; blank lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ValidationFailed([Problem("file not found", file=str(path))], "nothing was imported") from exc
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            [Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path))], "nothing was imported"
        ) from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, Problem(f"invalid JSON: {exc.msg} (column {exc.colno})", file=str(path), line=number)
            continue
        if not isinstance(obj, dict):
            yield number, Problem("each line must be a JSON object", file=str(path), line=number)
            continue
        yield number, obj


def pydantic_problems(exc: ValidationError, file: str, line: int) -> list[Problem]:
    """One Problem per pydantic error, with a dotted field path."""
    problems = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            message = "required field is missing"
        elif err["type"] == "extra_forbidden":
            message = "unknown field"
        problems.append(Problem(message, field=field, file=file, line=line))
    return problems


def validate_line(model: type[BaseModel], obj: dict[str, Any], file: str, line: int) -> BaseModel | list[Problem]:
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        return pydantic_problems(exc, file, line)


def read_models(path: Path, model: type[Model], problems: list[Problem]) -> Iterator[tuple[int, Model]]:
    """Yield ``(line_number, parsed)`` for every line that is valid ``model``; the others' problems are
    appended to ``problems``, so that a caller can report every problem of the file at once."""
    file = str(path)
    for number, obj in read_jsonl(path):
        if isinstance(obj, Problem):
            problems.append(obj)
            continue
        parsed = validate_line(model, obj, file, number)
        if isinstance(parsed, list):
            problems.extend(parsed)
            continue
        yield number, parsed  # type: ignore[misc]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n")
