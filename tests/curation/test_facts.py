"""The plain facts' helpers: stage-input hashes that never change with the encoder, merged records' indexes."""

from __future__ import annotations

import hashlib
import json

import pytest

from curation.facts import MergedRecords, RecordFacts, digest


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
