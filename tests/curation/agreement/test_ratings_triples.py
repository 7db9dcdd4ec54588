"""The in-memory reader of (unit, coder, value) triples gives what the generic row reader gives, errors too."""

import numpy as np
import pytest

from curation.agreement import UndefinedStatistic, ratings_from_rows
from curation.agreement.ratings import ratings_from_triples
from curation.errors import ValidationFailed


def generic(rows):
    return ratings_from_rows((0, {"unit": u, "coder": c, "value": v}) for u, c, v in rows)


def assert_same(rows):
    fast, slow = ratings_from_triples(rows), generic(rows)
    assert (fast.units, fast.coders, fast.values, fast.groups, fast.first_text) == (
        slow.units,
        slow.coders,
        slow.values,
        slow.groups,
        slow.first_text,
    )
    assert fast.matrix.dtype == slow.matrix.dtype
    np.testing.assert_array_equal(fast.matrix, slow.matrix)
    return fast


CASES = {
    "numbers": [("i1", "r1", 1), ("i1", "r2", 2), ("i2", "r1", 2.0), ("i2", "r2", "3"), ("i3", "r2", 1)],
    "booleans are text, ints are numbers": [("u", "a", True), ("u", "b", 1), ("v", "a", False), ("v", "b", 0)],
    "mixed text and numbers": [("u", "a", "A"), ("u", "b", 1.5), ("v", "a", -0.0), ("v", "b", 0.0)],
    "Chinese text, padded names": [(" 题1 ", "审稿人", "讽刺"), ("题1", " 作者 ", "感激"), ("题2", "作者", "讽刺")],
    "missing values are skipped": [("u", "a", None), ("u", "a", ""), ("u", "a", 1), ("v", "b", "  ")],
    "numeric text, infinities stay text": [("u", "a", " 4 "), ("u", "b", "inf"), ("v", "a", "nan"), ("v", "b", 4)],
}


@pytest.mark.parametrize("rows", CASES.values(), ids=CASES.keys())
def test_triples_read_as_the_generic_rows_do(rows):
    assert_same(rows)


def test_text_after_numbers_is_named_as_the_first_text():
    ratings = assert_same([("u", "a", 1), ("u", "b", "x"), ("v", "a", "y")])
    assert ratings.first_text == ("x", "", None)
    assert ratings.values == ("1", "x", "y")


@pytest.mark.parametrize(
    ("rows", "error", "message"),
    [
        ([("u", "a", 1), ("u", "a", 2)], ValidationFailed, "already rated unit"),
        ([("u", " ", 1)], ValidationFailed, "empty"),
        ([("u", "a", [1])], ValidationFailed, "not a list or object"),
        ([("u", "a", {"x": 1})], ValidationFailed, "not a list or object"),
        ([("u", "a", None), ("v", "b", "")], UndefinedStatistic, "holds no rating"),
    ],
)
def test_bad_triples_raise_the_generic_error(rows, error, message):
    with pytest.raises(error) as fast:
        ratings_from_triples(rows)
    with pytest.raises(error) as slow:
        generic(rows)
    assert message in str(fast.value) or any(message in p.message for p in getattr(fast.value, "problems", []))
    assert str(fast.value) == str(slow.value)
    assert getattr(fast.value, "problems", None) == getattr(slow.value, "problems", None)
