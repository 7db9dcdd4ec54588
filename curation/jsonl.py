"""Reading and writing JSON Lines with errors that name the file, the line and the field.

A line ends at ``\\n`` only (``\\r\\n`` is accepted): U+2028, U+2029, NEL, form feed and ``\\x1c``-``\\x1e`` are
text, not line breaks, so lines are never split with ``str.splitlines()``. The writer escapes U+2028, U+2029
and NEL, so a file it writes is one record per line for any reader. Both databases must accept the same input,
and PostgreSQL cannot store NUL in text: a NUL (``\\u0000``) anywhere in a line is refused, on every database.
An unpaired surrogate (a ``\\ud800``-``\\udfff`` escape without its pair) is not a character and is refused
the same way.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import Problem, ValidationFailed

Model = TypeVar("Model", bound=BaseModel)

MAX_LINE_BYTES = 1 << 20
"""A longer line is refused before it is parsed."""
MAX_TEXT_CHARS = 20_000
"""The longest text a field may hold (a context of megabytes would make every audit crawl)."""

_UNSAFE_IN_LINES = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


READ_CHUNK = 1 << 20


def open_regular(path: Path) -> BinaryIO:
    """Open a file for reading, refusing what is not a regular file (a FIFO would block, ``/dev/zero`` never
    ends) with a named problem. The open does not block on a FIFO (``O_NONBLOCK``)."""
    file = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError as exc:
        raise ValidationFailed([Problem("file not found", file=file)], "nothing was read") from exc
    except IsADirectoryError as exc:
        raise ValidationFailed([Problem("is a folder, not a file", file=file)], "nothing was read") from exc
    except OSError as exc:
        raise ValidationFailed([Problem(f"cannot read ({exc.strerror})", file=file)], "nothing was read") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        what = "a folder" if path.is_dir() else "not a regular file (a device, pipe or socket)"
        raise ValidationFailed([Problem(f"is {what}; give a JSONL file", file=file)], "nothing was read")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_lines(path: Path) -> Iterator[tuple[int, bytes | Problem]]:
    """Yield ``(line_number, bytes)`` per ``\n``-terminated line, read in bounded chunks: a line longer than
    :data:`MAX_LINE_BYTES` is reported (its size counted, its bytes never held) and reading goes on."""
    file = str(path)
    with open_regular(path) as fh:
        number, pending, dropped = 1, bytearray(), 0
        while chunk := fh.read(READ_CHUNK):
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                yield number, _finished(pending, chunk[start:end], dropped, file, number)
                number, pending, dropped, start = number + 1, bytearray(), 0, end + 1
            rest = chunk[start:]
            if dropped or len(pending) + len(rest) > MAX_LINE_BYTES:
                dropped += len(pending) + len(rest)
                pending = bytearray()
            else:
                pending += rest
        if pending or dropped:
            yield number, _finished(pending, b"", dropped, file, number)


def _finished(pending: bytearray, tail: bytes, dropped: int, file: str, number: int) -> bytes | Problem:
    size = dropped + len(pending) + len(tail)
    if size > MAX_LINE_BYTES:
        return Problem(
            f"line of {size:,} bytes exceeds the limit of {MAX_LINE_BYTES:,}; shorten its text", file=file, line=number
        )
    return bytes(pending) + tail if pending else tail


def parse_line(
    raw: bytes,
    file: str,
    number: int,
    loads: Callable[[bytes | str], Any] = json.loads,
    max_text: int | None = MAX_TEXT_CHARS,
) -> dict[str, Any] | Problem | None:
    """One line's object, or the Problem that refuses it (not UTF-8, invalid or too deeply nested JSON, not an
    object, a NUL or an over-long text anywhere); None for a blank line. Every JSONL reader goes through here,
    whichever JSON parser it uses. ``max_text=None`` (recorded model runs) keeps every rule but the text limit."""
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start + 1})", file=file, line=number)
    line = line.removesuffix("\r")
    if not line.strip():
        return None
    try:
        obj = loads(line)
    except RecursionError:
        return Problem("invalid JSON: nested too deeply", file=file, line=number)
    except ValueError as exc:  # json.JSONDecodeError and orjson.JSONDecodeError are ValueErrors
        message = f"{exc.msg} (column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else str(exc)
        return Problem(f"invalid JSON: {message}", file=file, line=number)
    if not isinstance(obj, dict):
        return Problem("each line must be a JSON object", file=file, line=number)
    problem = _text_problem(obj, line, max_text)
    if problem is not None:
        message, field = problem
        return Problem(message, field=field, file=file, line=number)
    return obj


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | Problem]]:
    """Yield ``(line_number, object)`` or ``(line_number, Problem)``; blank lines are skipped."""
    file = str(path)
    try:
        for number, raw in read_lines(path):
            obj = raw if isinstance(raw, Problem) else parse_line(raw, file, number)
            if obj is not None:
                yield number, obj
    except ValidationFailed as exc:
        raise ValidationFailed(exc.problems, "nothing was imported") from exc


def _text_problem(obj: dict[str, Any], line: str, max_text: int | None = MAX_TEXT_CHARS) -> tuple[str, str] | None:
    """A NUL, an unpaired surrogate or an over-long text anywhere in the record, as (message, field)."""
    try:
        if "\\u0000" in line:
            field = _find_text(obj, lambda text: "\x00" in text)
            if field is not None:
                return "contains a NUL character (\\u0000), which no text field may hold; remove it", field
        if "\\ud" in line or "\\uD" in line:
            field = _find_text(obj, _not_unicode)
            if field is not None:
                return (
                    "contains an unpaired surrogate (an escape from \\ud800 to \\udfff without its pair), which is "
                    "not a character; write the character itself, or both halves of its pair",
                    field,
                )
        if max_text is not None and len(line) > max_text:
            field = _find_text(obj, lambda text: len(text) > max_text)
            if field is not None:
                return f"text longer than the limit of {max_text:,} characters; shorten it", field
    except RecursionError:
        return "invalid JSON: nested too deeply", ""
    return None


def _not_unicode(text: str) -> bool:
    """Whether ``text`` holds an unpaired surrogate: JSON's ``\\u`` escapes can write one, but no database
    driver can store it in a text column (an item holding one ended its import in a traceback)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _find_text(value: Any, bad: Callable[[str], bool], where: str = "") -> str | None:
    """The dotted path of the first string (or key) for which ``bad`` holds, if any."""
    if isinstance(value, str):
        return where if bad(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}" if where else str(key)
            if bad(key):
                return here
            found = _find_text(item, bad, here)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_text(item, bad, f"{where}.{index}" if where else str(index))
            if found is not None:
                return found
    return None


def _entries(n: int) -> str:
    return f"{n} {'entry' if n == 1 else 'entries'}"


def _plain_length_message(err: Any) -> str | None:
    """Pydantic's length errors in plain words ("choose at least 1 entry; none is given"), not its own
    ("List should have at least 1 item after validation, not 0"); None for every other error."""
    ctx = err.get("ctx") or {}
    if err["type"] == "too_short":
        n, actual = int(ctx.get("min_length", 1)), int(ctx.get("actual_length", 0))
        return f"choose at least {_entries(n)}; " + ("none is given" if actual == 0 else f"{actual} given")
    if err["type"] == "too_long":
        n, actual = int(ctx.get("max_length", 0)), int(ctx.get("actual_length", 0))
        return f"at most {_entries(n)} allowed; {actual} given"
    return None


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
        else:
            message = _plain_length_message(err) or message
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


def dumps_line(record: Any, sort_keys: bool = False, compact: bool = False) -> str:
    """One record as one line of JSON (UTF-8 kept), with the characters other readers take for line breaks
    escaped."""
    separators = (",", ":") if compact else None
    text = json.dumps(record, ensure_ascii=False, sort_keys=sort_keys, separators=separators)
    if "\u2028" in text or "\u2029" in text or "\x85" in text:
        for char, escape in _UNSAFE_IN_LINES.items():
            text = text.replace(char, escape)
    return text


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(dumps_line(row) + "\n")
