"""Rows of an existing benchmark as the query lines ``curate judge import queries`` reads: from JSON Lines, a
Parquet file, or a local folder of Parquet files or of a Hugging Face ``datasets`` ``save_to_disk`` (Arrow
stream files). Nothing is downloaded. A mapping names the column of each field; media columns hold a path
(relative to the source) or the ``{"bytes": ..., "path": ...}`` struct ``datasets`` stores images and audio
as, written out beside the generated JSONL so that the import checks and stores them like any file.

Lives in the shell: the domain knows nothing of pyarrow.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.errors import Problem, ValidationFailed
from curation.jsonl import dumps_line, not_a_file, read_jsonl, validate_line
from curation.kinds.judge.schema import TaskLine

FIELDS = ("id", "instruction", "image", "audio", "video", "output", "source", "license")
MEDIA = ("image", "audio", "video")
_SUFFIX = {"image": ".png", "audio": ".wav", "video": ".mp4"}


@dataclass(frozen=True)
class Origin:
    """Where a row comes from in the user's own file: a JSONL line, or a Parquet or Arrow row."""

    file: str
    line: int | None = None
    row: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else f"{self.file}: row {self.row}"

    def problem(self, message: str, field: str = "") -> Problem:
        if self.line is not None:
            return Problem(message, field, self.line, self.file)
        return Problem(message, field, file=f"{self.file}: row {self.row}")


def _table_rows(path: Path) -> list[dict[str, Any]]:
    """A Parquet or Arrow file's rows; a file that is not one is refused by name (its first bytes decide)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    what = "a Parquet" if path.suffix == ".parquet" else "an Arrow"
    try:
        if path.suffix == ".parquet":
            return list(pq.read_table(path).to_pylist())
        with pa.memory_map(str(path)) as source:
            try:
                table = pa.ipc.open_stream(source).read_all()
            except pa.ArrowInvalid:
                table = pa.ipc.open_file(source).read_all()
        return list(table.to_pylist())
    except (pa.ArrowException, OSError, ValueError) as exc:  # ArrowInvalid is a ValueError, ArrowIOError an OSError
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ValidationFailed(
            [Problem(f"not {what} file ({detail})", file=str(path))], "nothing was imported"
        ) from exc


def _not_regular(path: Path) -> Problem | None:
    """A FIFO would block a reader and a device never ends: named as what it is, never opened."""
    if path.is_file() or path.is_dir():
        return None
    return Problem(f"{not_a_file(path) or 'is not a regular file'}; give the file itself", file=str(path))


def source_rows(source: Path, problems: list[Problem]) -> Iterator[tuple[Origin, Path, dict[str, Any]]]:
    """``(origin, base folder, row)`` for every row of a JSONL, Parquet or Arrow file, or of a folder of them;
    the problems of a file that cannot be read (and of each bad JSONL line) go to ``problems``."""
    if source.is_dir():
        files = sorted(p for p in source.rglob("*") if p.suffix in (".parquet", ".arrow", ".jsonl"))
        if not files:
            raise ValidationFailed(
                [Problem("no .parquet, .arrow or .jsonl file in this folder", "source", file=str(source))]
            )
    elif source.is_file():
        files = [source]
    elif source.exists():
        raise ValidationFailed([_not_regular(source) or Problem("cannot be read", file=str(source))])
    else:
        raise ValidationFailed([Problem("no such file or folder", "source", file=str(source))])
    for file in files:
        if (irregular := _not_regular(file)) is not None:
            problems.append(irregular)
        elif file.suffix == ".jsonl":
            try:
                for number, obj in read_jsonl(file):
                    if isinstance(obj, Problem):
                        problems.append(obj)
                    else:
                        yield Origin(str(file), line=number), file.parent, obj
            except ValidationFailed as exc:
                problems += exc.problems
        elif file.suffix in (".parquet", ".arrow"):
            try:
                rows = _table_rows(file)
            except ValidationFailed as exc:
                problems += exc.problems
                continue
            for number, row in enumerate(rows, 1):
                yield Origin(str(file), row=number), file.parent, row
        else:
            problems.append(
                Problem("not a .jsonl, .parquet or .arrow file, nor a folder of them", "source", file=str(file))
            )


def parse_mapping(pairs: list[str]) -> dict[str, str]:
    """``field=column`` options as a mapping; an unknown field is refused with the known ones."""
    mapping = {}
    for pair in pairs:
        name, sep, column = pair.partition("=")
        if not sep or name not in FIELDS or not column:
            raise ValidationFailed(
                [Problem(f"{pair!r}: use FIELD=COLUMN with FIELD one of {', '.join(FIELDS)}", "--map")]
            )
        mapping[name] = column
    return mapping


def _medium(value: Any, modality: str, base: Path, folder: Path) -> str | None:
    """Write one medium into ``folder`` and return its name there (None for an empty cell)."""
    if value is None or value == "":
        return None
    if isinstance(value, Mapping) and value.get("bytes"):
        data = bytes(value["bytes"])
        suffix = Path(str(value.get("path") or "")).suffix or _SUFFIX[modality]
        name = hashlib.sha256(data).hexdigest()[:32] + suffix
        (folder / name).write_bytes(data)
        return name
    relative = value.get("path") if isinstance(value, Mapping) else value
    if not isinstance(relative, str):
        raise ValueError(f"{modality}: neither a path nor a {{bytes, path}} struct")
    found = (base / relative).resolve()
    if not found.is_file():
        raise ValueError(f"{modality}: {relative} is not a file next to the source")
    name = hashlib.sha256(str(found).encode()).hexdigest()[:16] + "-" + found.name
    shutil.copyfile(found, folder / name)
    return name


def _what(value: Any) -> str:
    """A cell's value in the user's words (never a Python repr): ``a boolean (true)``, ``a number (3)``."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value:g})" if isinstance(value, float) else f"a number ({value})"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a value of type {type(value).__name__}"


def write_query_lines(
    source: Path, mapping: Mapping[str, str], defaults: Mapping[str, str], target: Path
) -> tuple[Path, int, list[Origin]]:
    """Write ``target/queries.jsonl`` (and its media) from the source's rows; every problem at once, named by
    the source's file and line (or row). Text fields take text only: ``true`` or ``3`` is refused, never
    written as ``"True"``. Returns the written file, its row count and each written line's origin."""
    target.mkdir(parents=True, exist_ok=True)
    lines, origins, problems = [], [], list[Problem]()
    seen: dict[str, Origin] = {}
    for index, (origin, base, row) in enumerate(source_rows(source, problems)):
        line: dict[str, Any] = {"inputs": {}}
        refused = False
        for name in FIELDS:
            column = mapping.get(name, name)
            value = row.get(column)
            try:
                if name in MEDIA:
                    medium = _medium(value, name, base, target)
                    if medium is not None:
                        line["inputs"][name] = medium
                elif isinstance(value, str) and value != "":
                    line[name] = value
                elif value is not None and value != "":
                    mapped = f" (the column given for {name})" if column != name else ""
                    raise ValueError(f"must be text, not {_what(value)}{mapped}")
                elif name in defaults:
                    line[name] = defaults[name]
            except ValueError as exc:
                problems.append(origin.problem(str(exc), column))
                refused = True
        if refused:
            continue
        line.setdefault("id", f"{defaults.get('source', source.stem)}-{index + 1:06d}")
        checked = validate_line(TaskLine, line, origin.file, origin.line or 0)
        if isinstance(checked, list):  # every row's problems at once, before the import reads any
            problems += [origin.problem(p.message, mapping.get(p.field, p.field)) for p in checked]
            continue
        if (first := seen.setdefault(line["id"], origin)) is not origin:
            problems.append(origin.problem(f"duplicate id {line['id']} (first at {first})", mapping.get("id", "id")))
            continue
        lines.append(line)
        origins.append(origin)
    if problems:
        raise ValidationFailed(problems, "nothing was imported")
    out = target / "queries.jsonl"
    out.write_text("".join(dumps_line(x) + "\n" for x in lines), encoding="utf-8")
    return out, len(lines), origins


def relocated(exc: ValidationFailed, written: Path, origins: list[Origin], source: Path) -> ValidationFailed:
    """The problems of the written query lines, named by the source's file and line (or row) they came from,
    never by the temporary file (which is gone by the time anyone reads the message)."""
    problems = []
    for problem in exc.problems:
        if problem.file != str(written):
            problems.append(problem)
        elif problem.line is not None and 0 < problem.line <= len(origins):
            problems.append(origins[problem.line - 1].problem(problem.message, problem.field))
        else:
            problems.append(Problem(problem.message, problem.field, file=str(source)))
    return ValidationFailed(problems, exc.summary.replace(str(written), str(source)))
