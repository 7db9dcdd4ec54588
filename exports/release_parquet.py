"""The Parquet data files of a release, laid out so that they load where users load data.

``datasets.load_dataset("parquet", data_files=...)`` gives a media column as a ``datasets.Image()`` or
``datasets.Audio()`` feature, and mlcroissant reads every column its Croissant file declares:

- A media column (``image``, ``audio``) is Arrow's struct ``{bytes: binary, path: string}``, the storage of
  ``datasets.Image`` and ``datasets.Audio``, with ``path`` the shipped file's path relative to the release folder
  (``media/<sha256><ext>``, the path the JSON Lines file gives) and ``bytes`` null: each medium is shipped once,
  under ``media/``, and decoded from there. ``datasets`` opens a relative path from the current folder, so a
  release is loaded from its own folder (docs/releases.md). A missing medium is a null struct.
- The Arrow schema's ``huggingface`` metadata (``{"info": {"features": ...}}``) declares those columns' features;
  ``datasets`` infers every other column from its Arrow type.
- A JSON column (a nested annotation) is its value as canonical JSON text (sorted keys, compact), a text column
  to Croissant (``sc:Text``) and to ``datasets``.
- A video column is the same struct, declared ``datasets.Video()`` (datasets 3.1 and later; it decodes with
  torchcodec from datasets 4.0, the release-check extra's minimum).

Fixed schemas and writer settings make the same records give the same bytes (for one pyarrow version). The rows
are parsed from JSON Lines rather than built with ``pa.array`` on Python lists, which imports pandas (a second
or more of a build).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from curation.errors import CurateError

from .writer import jsonl_bytes

MEDIA_FEATURES = {"image": "Image", "audio": "Audio", "video": "Video"}
"""Column type -> the ``datasets`` feature that decodes it."""
JSON_TYPE = "json"
CROISSANT_TYPES = {
    "string": "sc:Text",
    "int32": "sc:Integer",
    "bool": "sc:Boolean",
    JSON_TYPE: "sc:Text",
    "image": "sc:Text",
    "audio": "sc:Text",
    "video": "sc:Text",
}
"""Column type -> Croissant dataType (a medium is read as its path; ``list:T`` is an array of T)."""

Columns = Sequence[tuple[str, str]]
"""(name, type) per column, in file order; a type is a key of CROISSANT_TYPES or ``list:string``."""


def _arrow_type(kind: str) -> Any:
    import pyarrow as pa

    if kind.startswith("list:"):
        return pa.list_(_arrow_type(kind.split(":", 1)[1]))
    return {"int32": pa.int32(), "bool": pa.bool_()}.get(kind, pa.string())


def media_struct() -> Any:
    """The Arrow type of ``datasets.Image``, ``datasets.Audio`` and ``datasets.Video`` storage."""
    import pyarrow as pa

    return pa.struct([pa.field("bytes", pa.binary()), pa.field("path", pa.string())])


def features_metadata(columns: Columns) -> bytes:
    """The ``huggingface`` schema metadata: the ``datasets`` feature of each media column."""
    features = {name: {"_type": MEDIA_FEATURES[kind]} for name, kind in columns if kind in MEDIA_FEATURES}
    return json.dumps({"info": {"features": features}}, sort_keys=True, separators=(",", ":")).encode()


def json_text(records: Iterable[dict[str, Any]], columns: Columns) -> list[dict[str, Any]]:
    """The records with each JSON column's value as canonical JSON text (null stays null)."""
    wanted = [name for name, kind in columns if kind == JSON_TYPE]
    return [
        r
        | {
            c: None if r.get(c) is None else json.dumps(r[c], ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            for c in wanted
        }
        for r in records
    ]


def parquet_bytes(jsonl: bytes, columns: Columns, name: str = "the Parquet data file") -> bytes:
    """A Parquet file of the JSON Lines records (media columns as path strings, JSON columns as text, as
    :func:`json_text` gives them) with the media columns as ``{bytes, path}`` structs and their features
    declared."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.json as pa_json
        import pyarrow.parquet as pq
    except ModuleNotFoundError as exc:
        raise CurateError(f"writing {name} needs pyarrow: pip install 'omnicurate[release]'") from exc

    names = [c for c, _ in columns]
    read = pa.schema([pa.field(c, _arrow_type(kind)) for c, kind in columns])
    if jsonl.strip():
        table = (
            pa_json.read_json(
                pa.BufferReader(jsonl),
                read_options=pa_json.ReadOptions(use_threads=False, block_size=max(1 << 20, len(jsonl) + 1)),
                parse_options=pa_json.ParseOptions(explicit_schema=read, unexpected_field_behavior="error"),
            )
            .select(names)
            .combine_chunks()
        )
    else:
        table = read.empty_table()
    arrays = []
    for (_, kind), values in zip(columns, table.columns, strict=True):
        if kind in MEDIA_FEATURES:
            paths = values.combine_chunks()
            values = pa.StructArray.from_arrays(
                [pa.nulls(len(paths), pa.binary()), paths], fields=list(media_struct()), mask=pc.is_null(paths)
            )
        arrays.append(values)
    schema = pa.schema(
        [pa.field(c, media_struct() if kind in MEDIA_FEATURES else _arrow_type(kind)) for c, kind in columns],
        metadata={"huggingface": features_metadata(columns)},
    )
    sink = pa.BufferOutputStream()
    pq.write_table(
        pa.Table.from_arrays(arrays, schema=schema),
        sink,
        row_group_size=10_000,
        compression="zstd",
        compression_level=9,
        use_dictionary=True,
        write_statistics=True,
        version="2.6",
        data_page_version="1.0",
        store_schema=True,
    )
    return sink.getvalue().to_pybytes()


def records_parquet(records: Iterable[dict[str, Any]], columns: Columns, name: str) -> bytes:
    """:func:`parquet_bytes` of records as the JSON Lines file holds them (JSON columns nested)."""
    return parquet_bytes(jsonl_bytes(json_text(records, columns)), columns, name)


def croissant_field(record_set: str, file: str, name: str, kind: str, description: str, **extra: Any) -> dict[str, Any]:
    """A Croissant field read from one column of a Parquet data file: a medium as its ``path``, a JSON
    column as its text, a ``list:`` column as an array."""
    source: dict[str, Any] = {"fileObject": {"@id": file}, "extract": {"column": name}}
    if kind in MEDIA_FEATURES:
        source["transform"] = {"jsonPath": "path"}
    field = {
        "@type": "cr:Field",
        "@id": f"{record_set}/{name}",
        "name": name,
        "description": description,
        "dataType": CROISSANT_TYPES[kind.split(":")[-1]],
        "source": source,
        **extra,
    }
    if kind.startswith("list:"):
        field.update(isArray=True, arrayShape="-1")
    return field


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a release's Parquet file, each medium as its path (a JSON column stays text: :func:`same_row`
    compares it parsed). Raises whatever pyarrow raises for a damaged file."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    media = {f.name for f in table.schema if f.type == media_struct()}
    rows = table.to_pylist()
    for row in rows:
        for column in media:
            value = row[column]
            row[column] = value["path"] if isinstance(value, dict) and value.get("bytes") is None else value
    return rows


def same_row(row: dict[str, Any], shipped: dict[str, Any]) -> bool:
    """Whether a Parquet row (:func:`read_rows`) holds the JSON Lines record's values: nulls aside, every
    column of the row equal, a JSON column's text equal to the nested value."""

    def value(column: str, v: Any) -> Any:
        if isinstance(v, str) and column in shipped and not isinstance(shipped[column], str):
            try:
                return json.loads(v)
            except ValueError:
                return v
        return v

    mine = {k: value(k, v) for k, v in row.items() if v is not None}
    return mine == {k: v for k, v in shipped.items() if v is not None and k in row}


def mirror_problems(folder: Path, parquet: str, shipped: dict[str, dict[str, Any]], unit_file: str) -> list[str]:
    """Why ``parquet`` does not hold the records of ``unit_file`` (by id), or nothing."""
    try:
        rows = read_rows(folder / parquet)
    except Exception as exc:  # pyarrow raises several unrelated types for damaged files
        return [f"not readable ({exc})"]
    by_id = {r.get("id"): r for r in rows}
    if len(by_id) != len(rows) or set(by_id) != set(shipped):
        return [f"its ids differ from {unit_file}"]
    changed = sorted(str(i) for i in shipped if not same_row(by_id[i], shipped[i]))
    return [f"its items differ from {unit_file}: {', '.join(changed[:5])}"] if changed else []
