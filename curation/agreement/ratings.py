"""Ratings in long form (unit, coder, value), read from CSV or JSON Lines into a unit x coder matrix.

Every statistic in this package starts from :class:`Ratings`: one row per unit, one column per coder,
each cell the index of the value that coder gave (or ``-1`` when the rating is absent).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from pathlib import Path
from typing import Any

import numpy as np

from curation.errors import Problem, ValidationFailed

from .errors import UndefinedStatistic

MISSING = -1
REQUIRED_FIELDS = ("unit", "coder", "value")


@dataclass(frozen=True)
class Ratings:
    """Ratings as a unit x coder matrix of value indices into ``values`` (``MISSING`` where absent).

    ``values`` is sorted; it holds floats when every value is a number, else strings.
    ``groups`` maps units to the group they are resampled with (``None``: each unit is its own group).
    """

    units: tuple[str, ...]
    coders: tuple[str, ...]
    values: tuple[float, ...] | tuple[str, ...]
    matrix: np.ndarray
    groups: tuple[str, ...] | None = None
    first_text: tuple[str, str, int | None] | None = None
    """The first value that is not a number, with its file and line: what a numeric statistic names."""

    @property
    def numeric(self) -> bool:
        return all(isinstance(v, float) for v in self.values)

    def not_numeric(self, needs: str) -> Problem:
        """The problem to report when a statistic ``needs`` numbers: the first text value, where it stands."""
        if self.first_text is None:
            text = next(v for v in self.values if isinstance(v, str))
            return Problem(f"value {text!r} is not a number; {needs}", field="value")
        text, file, line = self.first_text
        return Problem(f"{text!r} is not a number; {needs}", field="value", line=line, file=file)

    def value_text(self, index: int) -> str:
        """A value as a person wrote it: ``3`` rather than ``3.0``."""
        value = self.values[index]
        return f"{value:g}" if isinstance(value, float) else value

    @property
    def n_ratings(self) -> int:
        return int((self.matrix != MISSING).sum())

    def value_counts(self) -> np.ndarray:
        """Units x values: how many coders gave each value to each unit."""
        n_units, n_values = self.matrix.shape[0], len(self.values)
        counts = np.zeros((n_units, n_values), dtype=np.int64)
        rows, cols = np.nonzero(self.matrix != MISSING)
        np.add.at(counts, (rows, self.matrix[rows, cols]), 1)
        return counts

    def group_index(self) -> np.ndarray | None:
        """Each unit's group as an integer (0..G-1), or ``None`` when units are not grouped."""
        if self.groups is None:
            return None
        _, index = np.unique(np.asarray(self.groups, dtype=object), return_inverse=True)
        return index.astype(np.int64)

    def kept_group_index(self, kept: np.ndarray) -> np.ndarray | None:
        """The groups of the units a statistic keeps (a mask or index array), renumbered 0..G'-1 for the
        cluster bootstrap; ``None`` when units are not grouped."""
        groups = self.group_index()
        if groups is None:
            return None
        return np.unique(groups[kept], return_inverse=True)[1]


def _parse_value(raw: object) -> float | str | None:
    """A number when it reads as one, else the text; ``None`` for an empty value (a missing rating)."""
    if raw is None:
        return None
    if isinstance(raw, bool):
        return str(raw).lower()
    if isinstance(raw, int | float):
        return float(raw)
    text = str(raw).strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        return text
    return number if np.isfinite(number) else text


def ratings_from_rows(
    rows: Iterable[tuple[int, Mapping[str, object]]], file: str = "", groups: Mapping[str, str] | None = None
) -> Ratings:
    """Build :class:`Ratings` from ``(line, record)`` pairs, reporting every problem at once.

    A record may carry a ``group`` key; ``groups`` (unit -> group) may be given instead. An empty value
    is a missing rating, as if the row were absent.
    """
    problems: list[Problem] = []
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    unit_group: dict[str, tuple[str, int]] = {}
    kept: list[tuple[str, str, float | str]] = []
    first_text: tuple[str, str, int | None] | None = None
    for position, (line, record) in enumerate(rows):
        missing = [f for f in REQUIRED_FIELDS if f not in record]
        for name in missing:
            problems.append(Problem("missing", field=name, line=line, file=file))
        if missing:
            continue
        unit, coder = str(record["unit"]).strip(), str(record["coder"]).strip()
        for name, text in (("unit", unit), ("coder", coder)):
            if not text:
                problems.append(Problem("empty", field=name, line=line, file=file))
        if not unit or not coder:
            continue
        group = record.get("group")
        if group not in (None, ""):
            previous = unit_group.setdefault(unit, (str(group), line))
            if previous[0] != str(group):
                problems.append(
                    Problem(
                        f"unit {unit!r} is in group {previous[0]!r} on line {previous[1]}, not {group!r}",
                        field="group",
                        line=line,
                        file=file,
                    )
                )
        if isinstance(record["value"], list | dict):
            problems.append(Problem("must be a number or a text, not a list or object", "value", line, file))
            continue
        value = _parse_value(record["value"])
        if value is None:
            continue
        first_position, first_line = seen.setdefault((unit, coder), (position, line))
        if first_position != position:
            problems.append(
                Problem(
                    f"coder {coder!r} already rated unit {unit!r} on line {first_line}",
                    field="value",
                    line=line,
                    file=file,
                )
            )
            continue
        kept.append((unit, coder, value))
        if first_text is None and isinstance(value, str):
            first_text = (value, file, line or None)
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in the ratings; fix them and try again")
    if not kept:
        where = f"{file} " if file else ""
        raise UndefinedStatistic(f"{where}holds no rating (every value is missing); no statistic is defined")
    if groups is None and unit_group:
        groups = {unit: group for unit, (group, _) in unit_group.items()}
    return _to_matrix(kept, groups, file, first_text)


def ratings_from_triples(rows: Sequence[tuple[object, object, object]]) -> Ratings:
    """:func:`ratings_from_rows` of in-memory ``(unit, coder, value)`` triples (no groups, no lines).

    The workspace's agreement reports build tens of thousands of such rows per release; this reads them
    column by column, without a record dict and a validation step per row, parsing each distinct value
    once. Any row the generic reader would report (an empty unit or coder, a list or object value, a
    repeated rating), a float value (0.0 and -0.0 are one key but two texts) or a batch without one rating
    sends the whole batch to :func:`ratings_from_rows`, so the result and every error are the same.
    """
    if not rows:
        return _generic(rows)
    unit_column, coder_column, raw_column = zip(*rows, strict=True)
    types = set(map(type, raw_column))
    if not types <= _PLAIN:
        return _generic(rows)
    keys = list(zip(map(type, raw_column), raw_column, strict=True))  # 1 and True: equal keys, other types
    parsed = {key: _parse_value(key[1]) for key in set(keys)}
    values = list(map(parsed.__getitem__, keys))
    if None in parsed.values():  # missing ratings: left out, as if absent
        kept = [v is not None for v in values]
        values = list(compress(values, kept))
        unit_column, coder_column = tuple(compress(unit_column, kept)), tuple(compress(coder_column, kept))
    units = list(map(str.strip, map(str, unit_column)))
    coders = list(map(str.strip, map(str, coder_column)))
    if not values or not all(units) or not all(coders):
        return _generic(rows)
    texts = [type(v) is str for v in parsed.values()]  # parsed values are exactly float or str
    first_text = next(((v, "", None) for v in values if type(v) is str), None) if any(texts) else None
    ratings = _matrix(units, coders, values, first_text)  # type: ignore[arg-type]
    return ratings if ratings is not None else _generic(rows)


_PLAIN = frozenset({str, int, bool, type(None)})
"""Value types :func:`ratings_from_triples` reads itself."""


def _generic(rows: Sequence[tuple[object, object, object]]) -> Ratings:
    return ratings_from_rows((0, {"unit": u, "coder": c, "value": v}) for u, c, v in rows)


def _to_matrix(
    kept: list[tuple[str, str, float | str]],
    groups: Mapping[str, str] | None,
    file: str,
    first_text: tuple[str, str, int | None] | None = None,
) -> Ratings:
    ratings = _matrix([u for u, _, _ in kept], [c for _, c, _ in kept], [v for _, _, v in kept], first_text)
    assert ratings is not None  # the caller dropped repeated ratings
    if groups is None:
        return ratings
    ungrouped = [u for u in ratings.units if u not in groups]
    if ungrouped:
        shown = ", ".join(ungrouped[:5]) + (" ..." if len(ungrouped) > 5 else "")
        raise ValidationFailed(
            [Problem(f"{len(ungrouped)} unit(s) have no group: {shown}", field="group", file=file)],
            "give every unit a group, or none",
        )
    return replace(ratings, groups=tuple(str(groups[u]) for u in ratings.units))


def _matrix(
    units_of: list[str],
    coders_of: list[str],
    raw_values: list[float | str],
    first_text: tuple[str, str, int | None] | None,
) -> Ratings | None:
    """The unit x coder matrix of ratings given row by row; ``None`` when a coder rated a unit twice."""
    unit_pos = {u: i for i, u in enumerate(dict.fromkeys(units_of))}  # in order of first appearance
    coder_pos = {c: i for i, c in enumerate(dict.fromkeys(coders_of))}
    unit_index = map(unit_pos.__getitem__, units_of)
    coder_index = map(coder_pos.__getitem__, coders_of)
    if set(map(type, raw_values)) <= {float}:  # parsed values are exactly float or str
        values: tuple = tuple(sorted(set(raw_values)))
    else:
        raw_values = [v if isinstance(v, str) else f"{v:g}" for v in raw_values]
        values = tuple(sorted(set(raw_values)))
    value_pos = {v: i for i, v in enumerate(values)}
    rows = np.fromiter(unit_index, dtype=np.int64, count=len(units_of))
    cols = np.fromiter(coder_index, dtype=np.int64, count=len(coders_of))
    cells = rows * len(coder_pos) + cols
    if np.unique(cells).size != cells.size:
        return None
    matrix = np.full((len(unit_pos), len(coder_pos)), MISSING, dtype=np.int64)
    matrix[rows, cols] = np.fromiter(map(value_pos.__getitem__, raw_values), dtype=np.int64, count=len(raw_values))
    return Ratings(units=tuple(unit_pos), coders=tuple(coder_pos), values=values, matrix=matrix, first_text=first_text)


def _csv_rows(path: Path, required: tuple[str, ...]):  # type: ignore[no-untyped-def]
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = [h.strip() for h in reader.fieldnames or []]
        absent = [f for f in required if f not in header]
        if absent:
            raise ValidationFailed(
                [Problem(f"header lacks {', '.join(absent)}", field="header", line=1, file=str(path))],
                f"the CSV must start with a header naming {','.join(required)}",
            )
        reader.fieldnames = header
        for record in reader:
            yield reader.line_num, {k: v for k, v in record.items() if k is not None}


def _jsonl_rows(path: Path, problems: list[Problem]):  # type: ignore[no-untyped-def]
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(Problem(f"not valid JSON ({exc.msg})", line=line_no, file=str(path)))
                continue
            if not isinstance(record, dict):
                problems.append(Problem("not a JSON object", line=line_no, file=str(path)))
                continue
            yield line_no, record


def read_records(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` pairs from JSON Lines (``.jsonl``/``.json``) or a CSV with a header (else).

    A CSV header must name every ``required`` field; JSON records are checked by the caller, which
    reports missing fields per line.
    """
    if not path.is_file():
        raise ValidationFailed([Problem("no such file", file=str(path))], "check the file's path")
    try:
        if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
            problems: list[Problem] = []
            rows = list(_jsonl_rows(path, problems))
            if problems:
                raise ValidationFailed(problems, f"{len(problems)} problem(s) in {path}; fix them and try again")
            return rows
        return list(_csv_rows(path, required))
    except UnicodeDecodeError as exc:
        raise ValidationFailed([Problem("not UTF-8 text", file=str(path))], str(exc)) from exc


def read_ratings(path: Path, groups: Mapping[str, str] | None = None) -> Ratings:
    """Read a ratings file in long form (unit, coder, value; optionally group)."""
    return ratings_from_rows(read_records(path, REQUIRED_FIELDS), file=str(path), groups=groups)


def ratings_from_matrix(
    matrix: Iterable[Iterable[object]],
    units: Iterable[str] | None = None,
    coders: Iterable[str] | None = None,
) -> Ratings:
    """Ratings from a coder x unit table (rows are coders, as in Krippendorff's papers); None/NaN: absent."""
    table = [list(row) for row in matrix]
    coder_ids = list(coders) if coders is not None else [f"c{i + 1}" for i in range(len(table))]
    width = max((len(r) for r in table), default=0)
    unit_ids = list(units) if units is not None else [f"u{j + 1}" for j in range(width)]
    rows = []
    for coder, row in zip(coder_ids, table, strict=True):
        for unit, value in zip(unit_ids, row, strict=False):
            if value is None or (isinstance(value, float) and np.isnan(value)):
                continue
            rows.append((0, {"unit": unit, "coder": coder, "value": value}))
    return ratings_from_rows(rows)
