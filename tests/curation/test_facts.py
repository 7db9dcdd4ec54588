"""The plain facts' helpers: stage-input hashes that never change with the encoder, merged records' indexes,
JSON columns read as ``json`` reads them."""

from __future__ import annotations

import hashlib
import json

import orjson
import pytest

from curation.facts import MergedRecords, RecordFacts, digest, json_reader


def _json_digest(*parts: object) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    "parts",
    [
        ("answer_check", "语境：雨夜。", "Which sound?", {"B": "雷声", "A": "rain", "D": "", "C": "ü"}, "", "a.wav"),
        ("grammar", 'tab\there, newline\n, nul\x00, del\x7f, \u2028 quote" back\\slash /', "", {}),
        ("group", [("item-1", "h1"), ("item-2", "h2")], {"z": [1, True, None], "a": {"y": -(2**63)}}),
        ("floats", 1e16, 1e-05, 0.1, {"x": 2.5}),  # json's float spelling, not orjson's
        ("big", 2**64, -(2**70)),
        ("integer keys", {2: "a", 1: "c"}),
    ],
)
def test_digest_is_the_hash_of_the_json_spelling_of_its_parts(parts: tuple[object, ...]) -> None:
    assert digest(*parts) == _json_digest(*parts)


def test_what_is_no_json_fails_as_it_always_did() -> None:
    with pytest.raises(UnicodeEncodeError):
        digest("a\ud800")
    with pytest.raises(TypeError):
        digest({"a set"})


def _rec(subject: str, stage: str, reviewer: str, ident: int) -> RecordFacts:
    return RecordFacts(subject, stage, reviewer, 1, "h", {}, ident)


def test_merged_records_index_reviewers_and_shape_by_subject_and_order() -> None:
    merged = MergedRecords(
        {
            "grammar": [_rec("item:x", "grammar", "ann", 5), _rec("item:x", "grammar", "bo", 2)],
            "group_integration": [_rec("group:g", "group_integration", "ann", 9), _rec("item:y", "grammar", "cy", 1)],
        }
    )
    assert [r.id for r in merged.of_reviewer("ann")] == [5, 9]
    assert merged.of_reviewer("nobody") == []
    assert merged.shape("item:x", "group:g") == (
        (2, "grammar", "cy"),
        (0, "grammar", "bo"),
        (0, "grammar", "ann"),
        (1, "group_integration", "ann"),
    )
    assert merged.shape("item:y")[0] == (0, "grammar", "cy")


STORED_VALUES = [
    {"verdict": "pass", "note": ""},
    {"note": "an unpaired \ud800 surrogate, and a pair \U0001f600"},
    {"revision": 2**70, "page": -(2**63) - 1, "edits": {"page": 12345678901234567890123}},
    {"limits": [2**64 - 1, -(2**63), 9999999999999999999]},
    {"score": float("nan"), "low": float("-inf"), "high": float("inf")},
    {"floats": [0.1, 1e16, 1e-05, -0.0, 5e-324, 1.7976931348623157e308]},
    {"id": "sha-1234567890123456789012345678", "n": 1234567890123456789.5},
    {"语境": "雨夜", "nested": [[{"a": None, "b": True}]]},
    None,
]


def _strict(value: object) -> str:
    """A spelling that tells an int from a float and NaN from NaN's absence, so equal spellings are equal values."""
    return json.dumps(value, sort_keys=True, default=repr) + repr(_types(value))


def _types(value: object) -> object:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


@pytest.mark.parametrize("value", STORED_VALUES)
def test_json_reader_reads_what_json_reads_of_every_stored_value(value: object) -> None:
    """A JSON column read as text: big integers stay integers, NaN and unpaired surrogates are read (by ``json``
    where orjson refuses them), beside texts orjson reads alone."""
    from curation.db import stored_json

    texts = [stored_json({"verdict": "pass"}), stored_json(value)]
    loads = json_reader(texts)
    for text in texts:
        try:
            read = loads(text)
        except orjson.JSONDecodeError:
            read = json.loads(text)
        assert _strict(read) == _strict(json.loads(text))


def test_json_reader_is_orjson_while_no_text_holds_an_integer_past_64_bits() -> None:
    assert json_reader(['{"n": 123456789012345678}', '"x"']) is orjson.loads
    assert json_reader([]) is orjson.loads
    # 64-bit integers, signed or not (a perceptual hash is an unsigned one), orjson reads exactly
    assert json_reader(['{"phash": 14857779684784052742}', f"[{2**64 - 1}, {-(2**63)}]"]) is orjson.loads
    assert json_reader(['"sha 1234567890123456789"']) is orjson.loads  # a run in a string, in range
    for past in (str(2**64), str(-(2**63) - 1), "99999999999999999999", "7" * 40, "12345678901234567890.5"):
        texts = ['{"n": 1}', f'{{"n": {past}, "m": 14857779684784052742}}', '"id 123456789012345678901234"']
        loads = json_reader(texts)
        assert loads is not orjson.loads, past
        assert [_strict(loads(t)) for t in texts] == [_strict(json.loads(t)) for t in texts]
        assert type(loads(texts[1])["n"]) is type(json.loads(texts[1])["n"])
