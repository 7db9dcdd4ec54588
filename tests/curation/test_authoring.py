"""Authoring one item from uploaded bytes, and the author's returned inbox."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from media_factory import make_image, make_tone

from curation.authoring import Upload, item_fields, returned_inbox, save_uploaded_item
from curation.errors import PermissionDenied, ValidationFailed
from curation.reviews import record_reviews
from curation.schema import GrammarReview
from curation.tables import Asset, Item
from curation.workflow import derive_status


def fields(item_id: str = "up-1", **overrides) -> dict:
    data = {
        "id": item_id,
        "group": "up",
        "perturbed": "audio",
        "language": "en",
        "context": "Sure, that was a really helpful suggestion.",
        "question": "How does the speaker feel about the suggestion?",
        "options": {"A": "grateful", "B": "sarcastic", "C": "ambivalent"},
        "answer": "A",
        "taxonomy": {"text": "pragmatic", "image": "semiotic", "audio": "prosodic"},
        "ambiguous": ["text", "audio"],
        "provenance": {
            "image": {"source": "photo", "license": "CC0-1.0"},
            "audio": {"source": "voice_acting", "license": "CC-BY-4.0"},
        },
    }
    data.update(overrides)
    return data


@pytest.fixture
def uploads(tmp_path: Path) -> tuple[Upload, Upload]:
    image = make_image(tmp_path / "photo.jpg", colour="blue")
    audio = make_tone(tmp_path / "take 1.wav", freq=330.0)
    return Upload("photo.jpg", image.read_bytes()), Upload("../take 1.wav", audio.read_bytes())


@pytest.fixture
def people(workspace):
    workspace.add_person("ann1", ["author"])
    workspace.add_person("ann2", ["author"])
    workspace.add_person("rev1", ["reviewer"])
    return workspace


def test_new_item_from_uploads_then_an_edit_makes_a_revision(people, uploads):
    ws = people
    image, audio = uploads
    report = save_uploaded_item(ws, "ann1", fields(author="someone-else"), image, audio)
    assert report.created == ["up-1"]
    item = ws.item("up-1")
    assert item.author == "ann1" and item.revision == 1
    assert item.image == hashlib.sha256(image.data).hexdigest()
    assert item.audio == hashlib.sha256(audio.data).hexdigest()
    with ws.session() as s:
        stored = s.get(Asset, item.audio)
    assert ws.asset_path(stored).read_bytes() == audio.data and stored.original_name == "take_1.wav"

    edited = item_fields(ws, "up-1")
    edited["context"] = "Sure, that was a really helpful suggestion!"
    report = save_uploaded_item(ws, "ann1", edited)  # no new uploads: the stored media are kept
    assert report.revised == ["up-1"]
    item = ws.item("up-1")
    assert item.revision == 2 and item.context.endswith("!") and item.audio == hashlib.sha256(audio.data).hexdigest()
    assert save_uploaded_item(ws, "ann1", item_fields(ws, "up-1")).unchanged == ["up-1"]


def test_only_the_author_edits_and_only_authors_write(people, uploads):
    save_uploaded_item(people, "ann1", fields(), *uploads)
    with pytest.raises(PermissionDenied, match="only its author"):
        save_uploaded_item(people, "ann2", item_fields(people, "up-1"))
    with pytest.raises(PermissionDenied, match="author role"):
        save_uploaded_item(people, "rev1", fields("up-2"), *uploads)


def test_problems_name_the_field_not_a_temporary_file(people, uploads):
    image, audio = uploads
    bad = fields(answer="Z", taxonomy={"text": "pragmatic", "image": "semiotic", "audio": "nope"})
    with pytest.raises(ValidationFailed) as exc:
        save_uploaded_item(people, "ann1", bad, image, audio)
    by_field = {p.field: p.message for p in exc.value.problems}
    assert set(by_field) == {"answer", "taxonomy.audio"}
    assert all(p.file == "" and p.line is None and "curate-upload" not in str(p) for p in exc.value.problems)
    with pytest.raises(ValidationFailed) as exc:
        save_uploaded_item(people, "ann1", fields(), None, audio)
    assert [(p.field, p.message) for p in exc.value.problems] == [("image", "upload an image file")]
    with pytest.raises(ValidationFailed) as exc:
        save_uploaded_item(people, "ann1", fields(), Upload("x.jpg", b"not an image"), audio)
    assert [p.field for p in exc.value.problems] == ["image"]
    with people.session() as s:
        assert s.get(Item, "up-1") is None


def test_returned_inbox_lists_reasons_and_notes(people, uploads):
    from curation.reviews import PendingReview

    save_uploaded_item(people, "ann1", fields("up-1"), *uploads)
    save_uploaded_item(people, "ann2", fields("up-2", group="other"), *uploads)
    review = GrammarReview(item="up-1", stage="grammar", reviewer="rev1", verdict="fail", note="Typo in option C.")
    record_reviews(people, [PendingReview(0, review)])
    inbox = returned_inbox(people, "ann1")
    assert [(e.id, e.stage, e.reasons) for e in inbox] == [("up-1", "grammar", ["grammar", "group:too_small"])]
    assert [(n.reviewer, n.stage, n.note) for n in inbox[0].notes] == [("rev1", "grammar", "Typo in option C.")]
    assert returned_inbox(people, "ann2", derive_status(people)) == []  # up-2 still waits at grammar
