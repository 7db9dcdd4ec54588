"""Filter and revise records: edits by path validated per field group, diffs against the model's proposal."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from curation.errors import ValidationFailed
from curation.screening.revise import (
    FilterRecord,
    ReviseRecord,
    apply_revision,
    diff_against_proposal,
    field_provenance,
    transition_from_record,
)

PROVENANCE = {"model": "qwen3-vl@abc", "prompt_hash": "0123456789abcdef"}
RECORD = {
    "id": "bk1-p03",
    "book": "bk1",
    "page": 3,
    "title": "Amara and the fox",
    "source": {"collection": "storyweaver", "license": "CC-BY-4.0", "url": ""},
    "current": {"image": "a.jpg", "text": "Amara walked to the river."},
    "next": {"image": "b.jpg", "text": "The fox was waiting by the water."},
    "annotations": {
        "book_meta": {"value": {"topic": "friendship by the river"}, "provenance": PROVENANCE},
        "conditions": {
            "value": {
                "characters": [{"name": "Amara", "emotion": "happy", "visibility": "visible", "action": "waves"}],
                "scene": "riverbank at dawn",
                "text_goal": "introduce the fox",
                "ambient_sound": "water",
            },
            "provenance": PROVENANCE,
        },
        "speech": {
            "value": {
                "speaker": "Amara",
                "utterance": "Hello, fox!",
                "emotion": "happy",
                "speed": "normal",
                "pitch": "high",
                "gender": "female",
            },
            "provenance": PROVENANCE,
        },
    },
}


def test_filter_record_needs_a_reason_to_drop() -> None:
    assert FilterRecord(item="x", reviewer="rev1", verdict="keep").reason == ""
    with pytest.raises(ValidationError, match="a drop needs a reason"):
        FilterRecord(item="x", reviewer="rev1", verdict="drop", reason=" ")


def test_a_revision_changes_only_its_fields_and_the_diff_names_the_reviewer() -> None:
    item = transition_from_record(RECORD)
    assert diff_against_proposal(item) == []
    revised = apply_revision(
        item,
        ReviseRecord(
            item=item.id,
            reviewer="rev2",
            edits={
                "conditions.scene": "riverbank at dusk",
                "conditions.characters.0.action": "kneels",
                "speech.pitch": "low",
            },
        ),
    )
    changes = [(c.path, c.proposed, c.current, c.by) for c in diff_against_proposal(revised)]
    assert changes == [
        ("conditions.characters.0.action", "waves", "kneels", "rev2"),
        ("conditions.scene", "riverbank at dawn", "riverbank at dusk", "rev2"),
        ("speech.pitch", "high", "low", "rev2"),
    ]
    assert revised.proposals == item.proposals  # the model's proposal is never edited
    assert field_provenance(revised, "conditions.scene") == {"by": "reviewer", "reviewer": "rev2"}
    assert field_provenance(revised, "conditions.text_goal") == {"by": "model", **PROVENANCE}
    # a later reviewer who puts the proposal back leaves no diff on that field
    back = apply_revision(revised, ReviseRecord(item=item.id, reviewer="rev3", edits={"speech.pitch": "high"}))
    assert [c.path for c in diff_against_proposal(back)] == ["conditions.characters.0.action", "conditions.scene"]


def test_bad_edits_are_all_named_and_nothing_changes() -> None:
    item = transition_from_record(RECORD)
    record = ReviseRecord(
        item=item.id,
        reviewer="rev2",
        edits={
            "speech.emotion": "furious",
            "conditions.characters.4.action": "x",
            "next.text": "rewritten reference",
            "conditions.weather": "rain",
        },
    )
    with pytest.raises(ValidationFailed) as caught:
        apply_revision(item, record)
    assert sorted(str(p) for p in caught.value.problems) == sorted(
        [
            "next.text: only annotation fields are revised (book_meta, conditions, speech)",
            "conditions.characters.4.action: no element 4",
            "conditions.weather: no field 'weather'",
            "speech.emotion: Input should be 'angry', 'happy', 'neutral' or 'sad'",
        ]
    )


def test_an_unannotated_record_is_refused_with_what_is_missing() -> None:
    with pytest.raises(ValidationFailed, match="bk1-p03 is not annotated"):
        transition_from_record({**RECORD, "annotations": {"book_meta": RECORD["annotations"]["book_meta"]}})
