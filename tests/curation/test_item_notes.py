"""Item notes (TRIAD App. E.3's A+ / I+ descriptions): the format, storage, revisions and the round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from curation.errors import ValidationFailed
from curation.fact_loading import load_facts
from curation.facts import digest
from curation.item_content import CONTENT_FIELDS, canonical_content, content_hash
from curation.items import export_items, import_items
from curation.kinds import stage_inputs
from curation.notes import NOTE_MAX_CHARS
from curation.schema import ItemContent
from curation.tables import Item, ItemRevision
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items

AUDIO_EN = 'Flat, slow voice: "Sure, that was a really helpful suggestion." A long sigh before "really".'
IMAGE_EN = "A woman at a kitchen table pushes a plate of burnt toast away <b>with</b> two fingers."
AUDIO_ZH = "语调平淡而拖长：“当然，这个建议真的很有帮助。”说“真的”之前有一声长叹。"
IMAGE_ZH = "厨房餐桌旁，一位女士用两根手指把一盘烤焦的吐司推开。"


@pytest.fixture
def ws(workspace: Workspace) -> Workspace:
    workspace.add_person("ann1", ["author"])
    return workspace


def two_modalities(id_: str, **overrides: Any) -> dict[str, Any]:
    """An item over text and image only."""
    row = item_row(
        id_,
        group="g2",
        perturbed="text",
        modalities=["text", "image"],
        taxonomy={"text": "pragmatic", "image": "semiotic"},
        ambiguous=["text"],
        provenance={"image": {"source": "photo", "license": "CC0-1.0"}},
        **overrides,
    )
    del row["audio"]
    return row


def noted_rows() -> list[dict[str, Any]]:
    return [
        item_row("en-a", notes={"audio": AUDIO_EN, "image": IMAGE_EN}),
        item_row("en-b", answer="B", notes={"image": IMAGE_EN}),
        item_row("zh-a", group="g3", language="zh", notes={"audio": AUDIO_ZH, "image": IMAGE_ZH}),
        item_row("plain", group="g4"),
    ]


def test_items_without_notes_hash_as_before() -> None:
    """Existing workspaces' content hashes must not change: these were computed before notes existed."""
    triad = ItemContent.model_validate(item_row("a"))
    canonical = canonical_content(triad, "1" * 64, "2" * 64)
    assert tuple(canonical) == CONTENT_FIELDS
    assert content_hash(canonical) == "f8a52ef83e6b18e0319f89ac990d7ecea5c23d52094545e3ed9fecddb60f8aa5"
    pair = ItemContent.model_validate(two_modalities("b"))
    assert content_hash(canonical_content(pair, "1" * 64, None)) == (
        "3e740445a73af072cb7590c22e6dcf9cbb2be1c45bc9c35f21435fe96aa161cd"
    )
    noted = ItemContent.model_validate(item_row("a", notes={"audio": AUDIO_EN}))
    with_note = canonical_content(noted, "1" * 64, "2" * 64)
    assert tuple(with_note) == (*CONTENT_FIELDS, "notes") and with_note["notes"] == {"audio": AUDIO_EN}


def test_notes_import_store_and_round_trip_in_english_and_chinese(
    ws: Workspace, make_workspace, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    import_items(ws, write_items(tmp_path / "in", noted_rows()))
    assert ws.item("en-a").extra == {"notes": {"image": IMAGE_EN, "audio": AUDIO_EN}}  # canonical order
    assert ws.item("zh-a").extra == {"notes": {"image": IMAGE_ZH, "audio": AUDIO_ZH}}
    assert ws.item("plain").extra is None
    with ws.session() as s:
        revision = s.get(ItemRevision, ("en-b", 1))
    assert revision is not None and revision.content["notes"] == {"image": IMAGE_EN}

    export_items(ws, tmp_path / "out" / "items.jsonl")
    exported = {row["id"]: row for row in map(json.loads, (tmp_path / "out" / "items.jsonl").read_text().splitlines())}
    assert exported["zh-a"]["notes"] == {"image": IMAGE_ZH, "audio": AUDIO_ZH}  # as typed, HTML and all
    assert exported["en-a"]["notes"]["image"] == IMAGE_EN and "notes" not in exported["plain"]
    assert sorted(import_items(ws, tmp_path / "out" / "items.jsonl").unchanged) == ["en-a", "en-b", "plain", "zh-a"]
    second = make_workspace("second")
    second.add_person("ann1", ["author"])
    import_items(second, tmp_path / "out" / "items.jsonl")
    with ws.session() as s1, second.session() as s2:
        first_hashes = {i.id: (i.content_hash, i.extra) for i in s1.scalars(select(Item))}
        second_hashes = {i.id: (i.content_hash, i.extra) for i in s2.scalars(select(Item))}
    assert first_hashes == second_hashes


def test_a_changed_note_is_a_revision_that_invalidates_grammar_only(ws: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    import_items(ws, write_items(folder, [item_row("a")]))
    with ws.session() as s:
        before = {f.id: f for f in load_facts(s)[0]}["a"]
    # an item without notes keeps the grammar inputs hash it had before notes existed
    assert stage_inputs(before, "grammar") == digest("grammar", before.context, before.question, before.options)

    report = import_items(ws, write_items(folder, [item_row("a", notes={"audio": AUDIO_EN})]))
    assert report.revised == ["a"] and ws.item("a").revision == 2
    revised = [e for e in ws.events("item:a") if e.action == "item.revised"][-1]
    assert revised.after["notes"] == {"audio": AUDIO_EN}
    with ws.session() as s:
        noted = {f.id: f for f in load_facts(s)[0]}["a"]
    assert stage_inputs(noted, "grammar") != stage_inputs(before, "grammar")
    for stage in ("audio_signoff", "subset_checklist", "answer_check"):
        assert stage_inputs(noted, stage) == stage_inputs(before, stage)

    edited = import_items(ws, write_items(folder, [item_row("a", notes={"audio": AUDIO_EN + " Then silence."})]))
    assert edited.revised == ["a"] and ws.item("a").revision == 3
    dropped = import_items(ws, write_items(folder, [item_row("a")]))
    assert dropped.revised == ["a"] and ws.item("a").extra is None
    with ws.session() as s:
        assert stage_inputs({f.id: f for f in load_facts(s)[0]}["a"], "grammar") == stage_inputs(before, "grammar")


def test_bad_notes_are_refused_with_file_and_line(ws: Workspace, tmp_path: Path) -> None:
    rows = [
        item_row("ok", notes={"audio": AUDIO_EN}),
        two_modalities("no-audio", notes={"audio": "A man laughs."}),
        item_row("unknown", notes={"video": "A pan across the room."}),
        item_row("blank", notes={"image": " \t "}),
        item_row("empty", notes={}),
        item_row("long", notes={"audio": "x" * (NOTE_MAX_CHARS + 1)}),
        item_row("typed", notes={"image": 3}),
        item_row("text", notes={"text": "The context."}),
    ]
    path = write_items(tmp_path / "in", rows)
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    found = [str(p) for p in exc.value.problems]
    assert f"{path}:2: notes.audio: the item has no audio" in "\n".join(found)
    assert f"{path}:3: notes.video: unknown field" in found
    assert any(p.startswith(f"{path}:4: notes.image:") and "whitespace" in p for p in found)
    assert any(p.startswith(f"{path}:5: notes:") and "leave notes out" in p for p in found)
    assert any(p.startswith(f"{path}:6: notes.audio:") and str(NOTE_MAX_CHARS) in p.replace(",", "") for p in found)
    assert any(p.startswith(f"{path}:7: notes.image:") for p in found)
    assert f"{path}:8: notes.text: unknown field" in found
    assert not any(f"{path}:1:" in p for p in found)
    with ws.session() as s:
        assert s.scalars(select(Item)).all() == []  # all or nothing
