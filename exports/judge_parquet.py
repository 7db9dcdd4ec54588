"""The Parquet files of a ``judge_task`` release: its tasks and its responses, one column per medium, so that
``datasets`` gives the input and output images as ``datasets.Image()``, audio as ``datasets.Audio()`` and video
as ``datasets.Video()`` (``exports.release_parquet``). The Croissant ``tasks`` and ``responses`` record sets read
these files; the JSON Lines files stay the record ``release verify`` and ``diff`` read, and each Parquet file
holds the same records, flattened (``input_image`` for ``inputs.image``, ``image`` for ``output.image``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .release_parquet import Columns, mirror_problems, parquet_bytes
from .writer import jsonl_bytes

MEDIA = ("image", "audio", "video")
TASK_COLUMNS: Columns = (
    *((c, "string") for c in ("id", "instruction", "output", "modality_pair", "source", "license")),
    *((f"input_{m}", m) for m in MEDIA),
)
RESPONSE_COLUMNS: Columns = (
    *((c, "string") for c in ("id", "task", "system", "text")),
    *((m, m) for m in MEDIA),
)
FILES = (
    (
        "data/tasks.parquet",
        "data/tasks.jsonl",
        "The tasks of data/tasks.jsonl, one column per input medium (input_image as datasets.Image(), "
        "input_audio as datasets.Audio(), input_video as datasets.Video()).",
    ),
    (
        "data/responses.parquet",
        "data/responses.jsonl",
        "The responses of data/responses.jsonl, one column per output (text; image as datasets.Image(), "
        "audio as datasets.Audio(), video as datasets.Video()).",
    ),
)


def flat_task(task: dict[str, Any]) -> dict[str, Any]:
    inputs = task.get("inputs") or {}
    return {c: task.get(c) for c, _ in TASK_COLUMNS[:6]} | {f"input_{m}": inputs.get(m) for m in MEDIA}


def flat_response(response: dict[str, Any]) -> dict[str, Any]:
    output = response.get("output") or {}
    return {c: response.get(c) for c in ("id", "task", "system")} | {m: output.get(m) for m in ("text", *MEDIA)}


_LAYOUT = {
    "data/tasks.parquet": (flat_task, TASK_COLUMNS),
    "data/responses.parquet": (flat_response, RESPONSE_COLUMNS),
}


def parquet_files(files: dict[str, bytes]) -> dict[str, bytes]:
    """The Parquet files from the release's JSON Lines bytes (path -> bytes)."""
    out = {}
    for parquet, jsonl, _ in FILES:
        flatten, columns = _LAYOUT[parquet]
        rows = [flatten(json.loads(line)) for line in files[jsonl].splitlines() if line.strip()]
        out[parquet] = parquet_bytes(jsonl_bytes(rows), columns, parquet)
    return out


def parquet_problems(
    folder: Path, data: dict[str, list[dict[str, Any]]], listed: dict[str, Any]
) -> list[tuple[str, str]]:
    """(path, why) pairs where a Parquet file does not hold its JSON Lines file's records."""
    problems = []
    for parquet, jsonl, _ in FILES:
        path = folder / parquet
        if parquet not in listed or jsonl not in data or not path.is_file() or path.is_symlink():
            continue  # a missing file or a link is reported by the file-list check
        flatten, _ = _LAYOUT[parquet]
        shipped = {r.get("id"): flatten(r) for r in data[jsonl]}
        problems += [(parquet, why) for why in mirror_problems(folder, parquet, shipped, jsonl)]
    return problems
