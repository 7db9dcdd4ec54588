"""Reading and writing JSON Lines with errors that name the file, the line and the field.

A line ends at ``\\n`` only (``\\r\\n`` is accepted): U+2028, U+2029, NEL, form feed and ``\\x1c``-``\\x1e`` are
text, not line breaks, so lines are never split with ``str.splitlines()``. The writer escapes U+2028, U+2029
and NEL, so a file it writes is one record per line for any reader. Both databases must accept the same input,
and PostgreSQL cannot store NUL in text: a NUL (``\\u0000``) anywhere in a line is refused, on every database.
An unpaired surrogate (a ``\\ud800``-``\\udfff`` escape without its pair) is not a character and is refused
the same way.

Numbers and nesting are bounded as every database and JSON tool can hold them: ``NaN``, ``Infinity`` and
``-Infinity`` (which Python's parser accepts, and a database stored as ``null``) and a number too large for a
double (``1e400``) are refused, as is an integer beyond 64 bits (:data:`MAX_INTEGER`) and a line nested more than
:data:`MAX_DEPTH` levels deep. Each is named as ``FILE:LINE: field: problem``, with the parser in use
(``json`` or ``orjson``) giving the same message.

A key given twice in one object (which every parser would read as the last one) is refused as
``FILE:LINE: field: given twice``; a key that holds a line break, a quote or a dot is shown JSON-escaped in a
field path (``"bad\\nkey"``), so that every problem stays one line (:func:`field_name`).

A path that is not a regular file is named as what it is (a folder, a FIFO, a device, a socket) by
:func:`not_a_file`, before anything is read from it: the one check of every door that reads a file. Text
documents (guidelines, release notes, lists of ids) are read by :func:`read_text_document`: bounded, UTF-8,
no NUL, every problem as ``FILE:LINE``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import Problem, ValidationFailed

Model = TypeVar("Model", bound=BaseModel)

MAX_LINE_BYTES = 1 << 20
"""A longer line is refused before it is parsed."""
MAX_TEXT_CHARS = 20_000
"""The longest text a field may hold (a context of megabytes would make every audit crawl)."""
MAX_DEPTH = 32
"""Levels of nesting a line may hold, its own object being level 1 (``{"provenance": {"image": {...}}}`` is 3):
deeper data is refused before any model, database or serializer meets it."""
MAX_INTEGER = 2**63 - 1
"""The largest integer (in magnitude) a line may hold: what a 64-bit database column stores."""
_MAY_BE_UNBOUNDED = re.compile(r"NaN|Infinity|\d{16}|[eE][+-]?\d{3}")
"""What a line holds before any of its numbers can be unbounded (a cheap test: text may match it too)."""
_LONG_DIGITS = re.compile(r"\d{19}")

_UNSAFE_IN_LINES = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


READ_CHUNK = 1 << 20


def not_a_file(path: Path | str) -> str | None:
    """Why ``path`` cannot be read as a file, in the user's words ("is a folder", "is a FIFO (a named pipe)",
    "is a device", "does not exist"), or None for a regular file. Symbolic links are followed."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "does not exist"
    except NotADirectoryError:
        return "does not exist (a part of the path is a file, not a folder)"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    return kind_problem(mode)


def kind_problem(mode: int) -> str | None:
    """What a file of ``st_mode`` is when it is not a regular file (see :func:`not_a_file`)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (a named pipe), not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    return "is not a regular file"


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
    problem = kind_problem(os.fstat(fd).st_mode)
    if problem is not None:
        os.close(fd)
        raise ValidationFailed([Problem(f"{problem}; give the file itself", file=file)], "nothing was read")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def sha256_regular(path: Path) -> str:
    """The SHA-256 of a regular file's bytes, read in chunks (a FIFO, a device or a folder refused by name)."""
    digest = hashlib.sha256()
    with open_regular(path) as fh:
        while chunk := fh.read(READ_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


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
    """One line's object, or the Problem that refuses it (not UTF-8, invalid JSON, not an object, nested deeper
    than :data:`MAX_DEPTH`, NaN, Infinity or an unbounded number, a NUL or an over-long text anywhere); None for a
    blank line. Every JSONL reader goes through here, whichever JSON parser it uses. ``max_text=None`` (recorded
    model runs) keeps every rule but the text limit."""
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start + 1})", file=file, line=number)
    line = line.removesuffix("\r")
    if not line.strip():
        return None
    if loads is not json.loads and _LONG_DIGITS.search(line):
        loads = json.loads  # orjson reads an integer beyond 64 bits as a float: json keeps it, to be refused
    obj, refused, field = loads_json(line, loads)
    if refused is not None:
        return Problem(refused, field=field, file=file, line=number)
    if not isinstance(obj, dict):
        return Problem("each line must be a JSON object", file=file, line=number)
    problem = structure_problem(obj, line) or _text_problem(obj, line, max_text)
    if problem is not None:
        message, field = problem
        return Problem(message, field=field, file=file, line=number)
    return obj


def loads_json(text: str, loads: Callable[[bytes | str], Any] = json.loads) -> tuple[Any, str | None, str]:
    """``(value, None, "")``, or ``(None, why, field)`` with a message saying why the text is not JSON (``field``
    names the key given twice in one object, else is empty). A parser other than ``json`` that refuses the text,
    or whose result may hide a key given twice (:func:`_may_hold_twice`), is asked again through ``json``, so both
    say the same (``NaN`` and ``1e400`` then parse, for :func:`structure_problem` to name their field)."""
    try:
        if loads is not json.loads:
            value = loads(text)
            if not _may_hold_twice(text, value):
                return value, None, ""
        return _STRICT.decode(text) if not text.startswith("\ufeff") else json.loads(text), None, ""
    except RecursionError:
        return None, NESTED_TOO_DEEPLY, ""
    except _GivenTwice:
        return None, "given twice in one object; keep one of them", _twice_field(text)
    except ValueError as exc:  # json.JSONDecodeError and orjson.JSONDecodeError are ValueErrors
        if loads is not json.loads:
            return loads_json(text)
        if isinstance(exc, json.JSONDecodeError):
            where = f"line {exc.lineno}, column {exc.colno}" if "\n" in text else f"column {exc.colno}"
            return None, f"invalid JSON: {exc.msg} ({where})", ""
        too_large = f"a number too large: integers may hold at most {len(str(MAX_INTEGER))} digits ({MAX_INTEGER:,})"
        return None, too_large, ""


class _GivenTwice(ValueError):
    """A key given twice in one JSON object (raised by the strict parser's object hook)."""


class _Twice(dict[str, Any]):
    """An object that held ``key`` twice (built only to name where, once a line is known to hold one)."""

    key: str | None = None


def _refuse_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _GivenTwice
    return obj


def _mark_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = _Twice(pairs)
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            obj.key = key
            break
        seen.add(key)
    return obj


_STRICT = json.JSONDecoder(object_pairs_hook=_refuse_twice)
"""``json.loads`` that refuses a key given twice in one object (``json`` and orjson keep the last silently)."""


def _twice_field(text: str) -> str:
    """The dotted field of the first key given twice in ``text`` (parsed again, marking each object)."""
    stack: list[tuple[Any, str]] = [(json.JSONDecoder(object_pairs_hook=_mark_twice).decode(text), "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, _Twice) and item.key is not None:
            return f"{where}.{field_name(item.key)}" if where else field_name(item.key)
        if isinstance(item, dict | list):
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((v, f"{where}.{field_name(k)}" if where else field_name(k)) for k, v in reversed(list(pairs)))
    return ""


def _may_hold_twice(text: str, value: Any) -> bool:
    """Whether ``value``, parsed from ``text`` by a parser that keeps the last of a key given twice, may have lost
    one: every key of ``text`` ends in ``":`` (unless whitespace precedes the colon, when this says so), and a
    text can hold ``":`` elsewhere only as more; so as many ``":`` as keys parsed means no key was given twice."""
    if " :" in text or "\t:" in text or "\r:" in text or "\n:" in text:
        return True
    keys, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return text.count('":') != keys


NESTED_TOO_DEEPLY = f"invalid JSON: nested too deeply (at most {MAX_DEPTH} levels); flatten it"


def structure_problem(value: Any, text: str = "") -> tuple[str, str] | None:
    """Nesting deeper than :data:`MAX_DEPTH`, a NaN or infinite number, or an integer beyond :data:`MAX_INTEGER`
    in ``value`` (parsed from ``text``), as (message, dotted field); walked without recursion, and only when the
    text could hold any of them."""
    deep = text.count("{") + text.count("[") > MAX_DEPTH if text else True
    if not deep and not (text and _MAY_BE_UNBOUNDED.search(text)):
        return None
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return f"nested too deeply (at most {MAX_DEPTH} levels); flatten it", where
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend(
                (v, f"{where}.{field_name(k)}" if where else field_name(k), depth + 1) for k, v in reversed(list(pairs))
            )
        elif isinstance(item, float) and not math.isfinite(item):
            if math.isnan(item):
                return "NaN is not a number JSON allows; write a number, or null where the field may be empty", where
            return (
                f"{'' if item > 0 else '-'}Infinity (or a number too large for a 64-bit float, which reads as it) is "
                "not a number JSON allows; write a finite number, or null where the field may be empty"
            ), where
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_INTEGER:
            return (
                f"an integer of {len(str(abs(item)))} digits is too large: integers go from -{MAX_INTEGER:,} to "
                f"{MAX_INTEGER:,}"
            ), where
    return None


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


MAX_DOCUMENT_BYTES = 16 << 20
"""The largest JSON document (not JSON Lines: a ``book.json``) read whole."""


def read_json_document(path: Path, max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """A whole JSON file, under the rules of a line (a regular file, UTF-8, no NUL, nesting, NaN and numbers
    bounded, no key given twice); a refusal is a :class:`ValidationFailed` whose Problem names the file and the
    line (or the field)."""
    file = str(path)
    text = _read_bounded(path, max_bytes)
    try:
        value = json.loads(text, object_pairs_hook=_refuse_twice)
    except (RecursionError, ValueError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            refused = Problem(f"invalid JSON: {exc.msg} (column {exc.colno})", file=file, line=exc.lineno)
        else:
            _, message, field = loads_json(text)
            refused = Problem(str(message), field, file=file)
        raise ValidationFailed([refused], "nothing was read") from None
    found = structure_problem(value, text) or _text_problem(value, text, None)
    if found is not None:
        raise ValidationFailed([Problem(found[0], found[1], file=file)], "nothing was read")
    return value


def read_text_document(path: Path, max_bytes: int, field: str = "") -> str:
    """A whole text file (Markdown, a list of ids): a regular file of at most ``max_bytes``, UTF-8 (a leading
    byte-order mark dropped), without NUL; a refusal names the file, the line and ``field``."""
    text = _read_bounded(path, max_bytes, field)
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        problem = Problem("contains a NUL character, which no text may hold; remove it", field, line, str(path))
        raise ValidationFailed([problem], "nothing was read")
    return text


def _read_bounded(path: Path, max_bytes: int, field: str = "") -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (refused by name otherwise)."""
    file = str(path)
    try:
        fh = open_regular(path)
    except ValidationFailed as exc:
        raise ValidationFailed([replace(p, field=field) for p in exc.problems], exc.summary) from None
    with fh:
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise ValidationFailed(
            [Problem(f"larger than the limit of {max_bytes:,} bytes; shorten it", field, file=file)], "nothing was read"
        )
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, at = raw[: exc.start].count(b"\n") + 1, exc.start - raw.rfind(b"\n", 0, exc.start)  # byte of the line
        problem = Problem(f"not UTF-8 text ({exc.reason} at byte {at}); save it as UTF-8", field, line, file)
        raise ValidationFailed([problem], "nothing was read") from None


_PLAIN_KEY = re.compile(r'[^\s."\\]+')


def field_name(key: object) -> str:
    """A key or index as one part of a dotted field path: as it is, or JSON-escaped in quotes when it is empty or
    holds whitespace, a line break, a dot, a quote or a character that is not printable (a problem naming a key
    ``"a\\nb"`` stays one line)."""
    text = str(key)
    if _PLAIN_KEY.fullmatch(text) and text.isprintable():
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in quoted)


def _text_problem(obj: Any, line: str, max_text: int | None = MAX_TEXT_CHARS) -> tuple[str, str] | None:
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
        return NESTED_TOO_DEEPLY, ""
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
            here = f"{where}.{field_name(key)}" if where else field_name(key)
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
        field = ".".join(map(field_name, err["loc"]))
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
