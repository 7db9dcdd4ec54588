import json

import numpy as np
import pytest

from curation.agreement import UndefinedStatistic, ratings_from_rows, read_ratings
from curation.agreement.ratings import MISSING
from curation.errors import ValidationFailed


def test_reads_csv_in_long_form(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("unit,coder,value\nu1,A,2\nu1,B,3\nu2,A,2\nu2,B,\n", encoding="utf-8")
    ratings = read_ratings(path)
    assert ratings.units == ("u1", "u2")
    assert ratings.coders == ("A", "B")
    assert ratings.values == (2.0, 3.0)
    assert ratings.numeric
    np.testing.assert_array_equal(ratings.matrix, [[0, 1], [0, MISSING]])
    assert ratings.groups is None


def test_reads_jsonl_with_text_values_and_groups(tmp_path):
    path = tmp_path / "r.jsonl"
    lines = [
        {"unit": "a", "coder": "x", "value": "yes", "group": "g1"},
        {"unit": "a", "coder": "y", "value": "no", "group": "g1"},
        {"unit": "b", "coder": "x", "value": 1, "group": "g2"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n", encoding="utf-8")
    ratings = read_ratings(path)
    assert ratings.values == ("1", "no", "yes")
    assert not ratings.numeric
    assert ratings.groups == ("g1", "g2")


def test_reports_every_problem_as_file_line_field(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("unit,coder,value\nu1,A,1\nu1,A,2\n,B,1\nu2,B,1\n", encoding="utf-8")
    with pytest.raises(ValidationFailed) as caught:
        read_ratings(path)
    messages = [str(p) for p in caught.value.problems]
    assert messages == [
        f"{path}:3: value: coder 'A' already rated unit 'u1' on line 2",
        f"{path}:4: unit: empty",
    ]


def test_refuses_a_header_without_value(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("unit,coder,score\nu1,A,1\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match=r"r.csv:1: header: header lacks value"):
        read_ratings(path)


def test_jsonl_problems_name_their_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"unit": "u", "coder": "A", "value": 1}\nnot json\n["list"]\n{"unit": "u"}\n')
    with pytest.raises(ValidationFailed) as caught:
        read_ratings(path)
    messages = [str(p) for p in caught.value.problems]
    assert messages[0].startswith(f"{path}:2: invalid JSON")
    assert messages[1] == f"{path}:3: each line must be a JSON object"


def test_values_must_be_scalars(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"unit": "u", "coder": "A", "value": [1, 2]}\n')
    with pytest.raises(ValidationFailed, match="r.jsonl:1: value: must be a number or a text"):
        read_ratings(path)


def test_duplicates_are_found_without_line_numbers():
    rows = [(0, {"unit": "u", "coder": "A", "value": 1}), (0, {"unit": "u", "coder": "A", "value": 2})]
    with pytest.raises(ValidationFailed, match="coder 'A' already rated unit 'u'"):
        ratings_from_rows(rows)


def test_missing_fields_are_reported_per_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"unit": "u", "coder": "A", "value": 1}\n{"unit": "u"}\n')
    with pytest.raises(ValidationFailed) as caught:
        read_ratings(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:2: coder: missing",
        f"{path}:2: value: missing",
    ]


def test_a_unit_keeps_one_group(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("unit,coder,value,group\nu1,A,1,g1\nu1,B,1,g2\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match="r.csv:3: group: unit 'u1' is in group 'g1' on line 2"):
        read_ratings(path)


def test_grouping_must_cover_every_unit(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("unit,coder,value,group\nu1,A,1,g1\nu2,A,1,\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match="1 unit.s. have no group: u2"):
        read_ratings(path)


def test_a_file_of_missing_values_is_undefined(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("unit,coder,value\nu1,A,\nu2,B,\n", encoding="utf-8")
    with pytest.raises(UndefinedStatistic, match="every value is missing"):
        read_ratings(path)


def test_a_missing_file_is_bad_input(tmp_path):
    with pytest.raises(ValidationFailed, match="no such file"):
        read_ratings(tmp_path / "absent.csv")
