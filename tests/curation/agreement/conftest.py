"""Published reference data sets for the agreement tests."""

from __future__ import annotations

import pytest

from curation.agreement import ratings_from_matrix

# Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011), the example with missing data:
# 4 coders (rows) x 12 units (columns); None marks a missing rating.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
KRIPPENDORFF_2011_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}

# Fleiss (1971) as tabulated on Wikipedia ("Fleiss' kappa", worked example): 10 subjects, 14 raters,
# 5 categories; each row counts the raters who put the subject in each category. kappa = 0.210.
FLEISS_1971 = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _rows_from_table(table: list[list[int]]) -> list[tuple[int, dict[str, object]]]:
    """Long-form rows from a subjects x categories count table; raters are numbered within a subject."""
    rows = []
    for subject, counts in enumerate(table):
        rater = 0
        for category, count in enumerate(counts, start=1):
            for _ in range(count):
                rows.append((0, {"unit": f"s{subject}", "coder": f"r{rater}", "value": category}))
                rater += 1
    return rows


def _rows_from_confusion(table: list[list[int]], labels: list[str]) -> list[tuple[int, dict[str, object]]]:
    """Long-form rows for two coders from their confusion table (rows: coder A, columns: coder B)."""
    rows = []
    unit = 0
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            for _ in range(count):
                unit += 1
                rows.append((0, {"unit": unit, "coder": "A", "value": labels[i]}))
                rows.append((0, {"unit": unit, "coder": "B", "value": labels[j]}))
    return rows


@pytest.fixture
def krippendorff_2011():
    return ratings_from_matrix(KRIPPENDORFF_2011, units=[str(u) for u in range(1, 13)], coders="ABCD")


def _write_long_csv(path, matrix, coders="ABCD") -> None:  # type: ignore[no-untyped-def]
    """Write a coder x unit table as a long-form ratings CSV, leaving missing ratings out."""
    lines = ["unit,coder,value"]
    for coder, row in zip(coders, matrix, strict=True):
        lines += [f"u{j + 1},{coder},{v}" for j, v in enumerate(row) if v is not None]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def krippendorff_2011_table():
    return KRIPPENDORFF_2011


@pytest.fixture
def krippendorff_2011_alpha():
    return KRIPPENDORFF_2011_ALPHA


@pytest.fixture
def fleiss_1971_rows():
    return _rows_from_table(FLEISS_1971)


@pytest.fixture
def confusion_rows():
    return _rows_from_confusion


@pytest.fixture
def write_long_csv():
    return _write_long_csv
