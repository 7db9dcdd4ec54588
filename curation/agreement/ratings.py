"""Ratings in long form (unit, coder, value), read from CSV or JSON Lines into a unit x coder matrix.

Every statistic in this package starts from :class:`Ratings`: one row per unit, one column per coder,
each cell the index of the value that coder gave (or ``-1`` when the rating is absent).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from pathlib import Path
from typing import Any

import numpy as np

from curation.errors import Problem, ValidationFailed
from curation.jsonl import field_name, not_a_file, read_jsonl, read_lines

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


RATING_FIELDS = (*REQUIRED_FIELDS, "group")
"""The fields (CSV columns, JSON keys) of a ratings file; any other is refused."""


def _csv_rows(path: Path, required: tuple[str, ...], allowed: tuple[str, ...] | None, problems: list[Problem]):  # type: ignore[no-untyped-def]
    """``(line, record)`` per row of a CSV with a header, read line by line by the shared bounded reader: a line
    that is not UTF-8, holds a NUL or is too long, a header naming an unknown or repeated column, a row of another
    width than the header and a row the csv module refuses each go to ``problems`` as FILE:LINE."""
    file = str(path)

    def lines():  # type: ignore[no-untyped-def]
        for number, raw in read_lines(path):
            problem = raw if isinstance(raw, Problem) else None
            if problem is None:
                assert isinstance(raw, bytes)
                try:
                    text = (raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw).decode("utf-8")
                except UnicodeDecodeError as exc:
                    problem = Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start + 1})", line=number, file=file)
                else:
                    if "\x00" in text:
                        problem = Problem("contains a NUL character; remove it", line=number, file=file)
            if problem is not None:
                problems.append(problem)
                yield "\n"  # an empty row in its place keeps the csv module's line count
            else:
                yield text + "\n"

    reader = csv.reader(lines())
    try:
        header = [h.strip() for h in next(reader, [])]
        if problems:  # the header itself could not be read
            return
        absent = [f for f in required if f not in header]
        if absent:
            raise ValidationFailed(
                [Problem(f"header lacks {', '.join(absent)}", field="header", line=1, file=file)],
                f"the CSV must start with a header naming {','.join(required)}",
            )
        for n, name in enumerate(header):
            if allowed is not None and name not in allowed:
                problems.append(
                    Problem(f"unknown column; the columns are {', '.join(allowed)}", field_name(name), 1, file)
                )
            elif name in header[:n]:
                problems.append(Problem("column given twice; keep one", field_name(name), 1, file))
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                problems.append(
                    Problem(f"{len(row)} fields; the header names {len(header)}", line=reader.line_num, file=file)
                )
                continue
            yield reader.line_num, dict(zip(header, row, strict=True))
    except csv.Error as exc:
        problems.append(Problem(f"not CSV ({exc}); nothing after it was read", line=reader.line_num, file=file))


def _jsonl_rows(path: Path, allowed: tuple[str, ...] | None, problems: list[Problem]):  # type: ignore[no-untyped-def]
    """``(line, record)`` per line, read by the shared reader (NaN, Infinity, a key given twice, deep nesting
    refused); an unknown field or a value that is not a number or a text goes to ``problems`` as FILE:LINE."""
    file = str(path)
    for number, record in read_jsonl(path):
        if isinstance(record, Problem):
            problems.append(record)
            continue
        found = [
            Problem(f"unknown field; the fields are {', '.join(allowed)}", field_name(key), number, file)
            for key in record
            if allowed is not None and key not in allowed
        ]
        for key, value in record.items():
            if isinstance(value, bool):
                found.append(Problem(_NOT_A_FLAG.format(json.dumps(value)), field_name(key), number, file))
            elif isinstance(value, list | dict):
                found.append(Problem("must be a number or a text, not a list or object", field_name(key), number, file))
        problems += found
        if not found:
            yield number, record


_NOT_A_FLAG = 'must be a number or a text, not {0}; write "{0}" where it is a category'


def read_records(
    path: Path, required: tuple[str, ...], allowed: tuple[str, ...] | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` pairs from JSON Lines (``.jsonl``/``.json``) or a CSV with a header (else), read by
    the shared bounded reader and refused whole, every problem as FILE:LINE.

    A CSV header must name every ``required`` field; JSON records are checked by the caller, which reports
    missing fields per line. With ``allowed``, any other column or key is refused by name.
    """
    why = not_a_file(path)
    if why is not None:
        if why.startswith("does not exist"):
            raise ValidationFailed([Problem("no such file", file=str(path))], "check the file's path")
        raise ValidationFailed([Problem(f"{why}; give the file itself", file=str(path))], "nothing was read")
    problems: list[Problem] = []
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        rows = list(_jsonl_rows(path, allowed, problems))
    else:
        rows = list(_csv_rows(path, required, allowed, problems))
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {path}; fix them and try again")
    return rows


def read_ratings(path: Path, groups: Mapping[str, str] | None = None) -> Ratings:
    """Read a ratings file in long form (unit, coder, value; optionally group): unknown fields, a null unit or
    coder and a value of NaN or infinity (as a JSON number or as text) are refused, each as FILE:LINE."""
    file = str(path)
    records = read_records(path, REQUIRED_FIELDS, RATING_FIELDS)
    problems = []
    for line, record in records:
        problems += [
            Problem("must be a text or a number, not null", name, line, file)
            for name in ("unit", "coder")
            if name in record and record[name] is None
        ]
        value = record.get("value")
        if isinstance(value, str) and _not_finite(value):
            problems.append(
                Problem(
                    f"{value.strip()} is not a rating (not a finite number); write a number or a category, or leave "
                    "the value empty for a missing rating",
                    "value",
                    line,
                    file,
                )
            )
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {path}; fix them and try again")
    return ratings_from_rows(records, file=file, groups=groups)


def _not_finite(text: str) -> bool:
    """Whether ``text`` reads as NaN or an infinity (``nan``, ``-Infinity``, ``1e400``), which no statistic takes."""
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


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
