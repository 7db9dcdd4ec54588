"""Rows of an existing benchmark as the query lines ``curate judge import queries`` reads: from JSON Lines, a
Parquet file, or a local folder of Parquet files or of a Hugging Face ``datasets`` ``save_to_disk`` (Arrow
stream files). Nothing is downloaded. A mapping names the column of each field; media columns hold a path
(relative to the source) or the ``{"bytes": ..., "path": ...}`` struct ``datasets`` stores images and audio
as, written out beside the generated JSONL so that the import checks and stores them like any file.

Lives in the shell: the domain knows nothing of pyarrow.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from curation.errors import Problem, ValidationFailed

FIELDS = ("id", "instruction", "image", "audio", "video", "output", "source", "license")
MEDIA = ("image", "audio", "video")
_SUFFIX = {"image": ".png", "audio": ".wav", "video": ".mp4"}


def _table_rows(path: Path) -> Iterator[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.suffix == ".parquet":
        yield from pq.read_table(path).to_pylist()
    elif path.suffix == ".arrow":
        with pa.memory_map(str(path)) as source:
            try:
                table = pa.ipc.open_stream(source).read_all()
            except pa.ArrowInvalid:
                table = pa.ipc.open_file(source).read_all()
        yield from table.to_pylist()


def source_rows(source: Path) -> Iterator[tuple[str, Path, dict[str, Any]]]:
    """``(where, base folder, row)`` for every row of a JSONL, Parquet or Arrow file, or of a folder of them."""
    if source.is_dir():
        files = sorted(p for p in source.rglob("*") if p.suffix in (".parquet", ".arrow", ".jsonl"))
        if not files:
            raise ValidationFailed(
                [Problem("no .parquet, .arrow or .jsonl file in this folder", "source", file=str(source))]
            )
    elif source.is_file():
        files = [source]
    else:
        raise ValidationFailed([Problem("no such file or folder", "source", file=str(source))])
    for file in files:
        if file.suffix == ".jsonl":
            for number, line in enumerate(file.read_text(encoding="utf-8").split("\n"), 1):
                if line.strip():
                    try:
                        yield f"{file}:{number}", file.parent, json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise ValidationFailed([Problem(f"not valid JSON ({exc})", "line", number, str(file))]) from exc
        elif file.suffix in (".parquet", ".arrow"):
            for number, row in enumerate(_table_rows(file), 1):
                yield f"{file}:row {number}", file.parent, row
        else:
            raise ValidationFailed(
                [Problem("not a .jsonl, .parquet or .arrow file, nor a folder of them", "source", file=str(file))]
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


def write_query_lines(
    source: Path, mapping: Mapping[str, str], defaults: Mapping[str, str], target: Path
) -> tuple[Path, int]:
    """Write ``target/queries.jsonl`` (and its media) from the source's rows; every problem at once."""
    target.mkdir(parents=True, exist_ok=True)
    lines, problems = [], []
    for index, (where, base, row) in enumerate(source_rows(source)):
        line: dict[str, Any] = {"inputs": {}}
        try:
            for name in FIELDS:
                column = mapping.get(name, name)
                value = row.get(column)
                if name in MEDIA:
                    medium = _medium(value, name, base, target)
                    if medium is not None:
                        line["inputs"][name] = medium
                elif value is not None and value != "":
                    line[name] = str(value)
                elif name in defaults:
                    line[name] = defaults[name]
            line.setdefault("id", f"{defaults.get('source', source.stem)}-{index + 1:06d}")
        except ValueError as exc:
            problems.append(Problem(str(exc), "row", file=where))
            continue
        lines.append(line)
    if problems:
        raise ValidationFailed(problems, "nothing was imported")
    out = target / "queries.jsonl"
    out.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return out, len(lines)
