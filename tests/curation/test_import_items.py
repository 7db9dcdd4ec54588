"""Item import: every validation rule, all-or-nothing, revisions, media safety, round trip."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PIL import Image
from sqlalchemy import select

from curation.errors import ValidationFailed
from curation.items import export_items, import_items
from curation.tables import Asset, Item, ItemRevision
from curation.workspace import Workspace
from tests.media_factory import item_row, make_image, make_tone, write_items


@pytest.fixture
def ws(workspace: Workspace) -> Workspace:
    workspace.add_person("ann1", ["author"])
    workspace.add_person("rev1", ["reviewer"])
    return workspace


def counts(ws: Workspace) -> tuple[int, int, int]:
    with ws.session() as s:
        return (
            len(s.scalars(select(Item)).all()),
            len(s.scalars(select(ItemRevision)).all()),
            len(s.scalars(select(Asset)).all()),
        )


def problems_of(exc: pytest.ExceptionInfo[ValidationFailed]) -> list[str]:
    return [str(p) for p in exc.value.problems]


def test_import_creates_items_groups_and_media_once(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a"), item_row("b", answer="B")])
    report = import_items(ws, path)
    assert sorted(report.created) == ["a", "b"]
    assert counts(ws) == (2, 2, 3)  # one shared image, two clips
    with ws.session() as s:
        for asset in s.scalars(select(Asset)).all():
            stored = ws.asset_path(asset)
            assert stored.is_file() and stored.name.startswith(asset.sha256)
    assert not any((ws.media.root / ".staging").glob("*/*.wav"))


def test_reimport_of_the_same_file_changes_nothing(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a"), item_row("b", answer="B")])
    import_items(ws, path)
    events_before = len(ws.events("item:a"))
    report = import_items(ws, path)
    assert report.created == [] and report.revised == [] and sorted(report.unchanged) == ["a", "b"]
    assert counts(ws) == (2, 2, 3)
    assert len(ws.events("item:a")) == events_before


def test_changed_item_becomes_a_new_revision_with_history(ws: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    import_items(ws, write_items(folder, [item_row("a")]))
    changed = item_row("a", context="Sure, that was a truly helpful suggestion.")
    report = import_items(ws, write_items(folder, [changed]))
    assert report.revised == ["a"]
    item = ws.item("a")
    assert item.revision == 2 and "truly" in item.context
    with ws.session() as s:
        revisions = s.scalars(
            select(ItemRevision).where(ItemRevision.item_id == "a").order_by(ItemRevision.revision)
        ).all()
    assert [r.revision for r in revisions] == [1, 2]
    assert "really" in revisions[0].content["context"]
    revised = [e for e in ws.events("item:a") if e.action == "item.revised"]
    assert revised and revised[0].before == {"context": revisions[0].content["context"]}
    assert revised[0].after["context"] == item.context


@pytest.mark.parametrize(
    ("override", "field", "needle"),
    [
        ({"author": "nobody"}, "author", "unknown author"),
        ({"author": "rev1"}, "author", "author role"),
        (
            {"taxonomy": {"text": "pragmatic", "image": "semiotic", "audio": "loud"}},
            "taxonomy.audio",
            "unknown audio leaf",
        ),
        ({"answer": "E"}, "answer", "not among the options"),
        ({"options": {"A": "only one"}, "answer": "A"}, "options", "2 to 8 options"),
        ({"options": {k: f"opt {k}" for k in "ABCDEFGHI"[:9]}}, "options", "2 to 8 options"),
        ({"options": {"A": "x", "C": "y"}}, "options", "option keys must be A, B"),
        ({"ambiguous": []}, "ambiguous", "at least 1"),
        ({"perturbed": "smell"}, "perturbed", "Input should be"),
        (
            {
                "provenance": {
                    "image": {"source": "photo", "license": "CC0-1.0"},
                    "audio": {"source": "robot", "license": "CC0-1.0"},
                }
            },
            "provenance.audio.source",
            "unknown audio source",
        ),
        ({"question": ""}, "question", "at least 1 character"),
        ({"colour": "red"}, "colour", "unknown field"),
    ],
)
def test_each_rule_names_file_line_and_field(
    ws: Workspace, tmp_path: Path, override: dict, field: str, needle: str
) -> None:
    path = write_items(tmp_path / "in", [item_row("ok"), item_row("bad", **override)])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    lines = problems_of(exc)
    assert any(line.startswith(f"{path}:2: {field}: ") and needle in line for line in lines), lines
    assert counts(ws) == (0, 0, 0)


def test_all_errors_are_reported_at_once(ws: Workspace, tmp_path: Path) -> None:
    rows = [item_row("a", answer="Z"), item_row("a"), item_row("c", author="ghost"), item_row("d", perturbed="image")]
    path = write_items(tmp_path / "in", rows)
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    text = "\n".join(problems_of(exc))
    assert f"{path}:1: answer:" in text
    assert f"{path}:2: id: duplicate id 'a' (first on line 1)" in text
    assert f"{path}:4: perturbed:" in text and "sisters must agree" in text
    assert counts(ws) == (0, 0, 0)


def test_store_rules_are_checked_after_file_rules(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a", author="ghost"), item_row("b", author="rev1")])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    text = "\n".join(problems_of(exc))
    assert f"{path}:1: author: unknown author 'ghost'" in text and f"{path}:2: author:" in text


def test_group_perturbed_must_agree_with_the_workspace(ws: Workspace, tmp_path: Path) -> None:
    import_items(ws, write_items(tmp_path / "one", [item_row("a")]))
    path = write_items(tmp_path / "two", [item_row("b", perturbed="text")])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert "is 'audio'-perturbed in the workspace" in "\n".join(problems_of(exc))


def test_malformed_json_names_the_line(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a")])
    path.write_text(path.read_text() + "{not json\n[1, 2]\n")
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    text = "\n".join(problems_of(exc))
    assert f"{path}:2: invalid JSON" in text and f"{path}:3: each line must be a JSON object" in text


@pytest.mark.parametrize("bad", ["../outside.wav", "/etc/passwd", "media/../../outside.wav"])
def test_media_paths_may_not_escape_the_jsonl_folder(ws: Workspace, tmp_path: Path, bad: str) -> None:
    make_tone(tmp_path / "outside.wav")
    path = write_items(tmp_path / "in" / "sub", [item_row("a", audio=bad)])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert any(":1: audio:" in p for p in problems_of(exc))


def test_symlink_pointing_outside_is_refused(ws: Workspace, tmp_path: Path) -> None:
    secret = make_tone(tmp_path / "secret.wav")
    folder = tmp_path / "in"
    (folder / "media").mkdir(parents=True)
    os.symlink(secret, folder / "media" / "link.wav")
    path = write_items(folder, [item_row("a", audio="media/link.wav")])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert "leaves the JSONL file's folder" in "\n".join(problems_of(exc))


def test_missing_and_broken_media_name_the_file(ws: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    (folder / "media").mkdir(parents=True)
    (folder / "media" / "fake.jpg").write_text("this is not a JPEG")
    (folder / "media" / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    (folder / "media" / "empty.wav").write_bytes(b"")
    rows = [
        item_row("a", image="media/fake.jpg"),
        item_row("b", audio="media/broken.wav"),
        item_row("c", audio="media/missing.wav"),
        item_row("d", audio="media/empty.wav"),
        item_row("e", image="media/e.wav", audio="media/e.wav"),
    ]
    path = write_items(folder, rows)
    (folder / "media" / "missing.wav").unlink()
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    text = "\n".join(problems_of(exc))
    assert f"{path}:1: image: fake.jpg: not a readable image" in text
    assert f"{path}:2: audio: broken.wav: not decodable audio" in text
    assert f"{path}:3: audio: media/missing.wav: file not found" in text
    assert f"{path}:4: audio: empty.wav: file is empty" in text
    assert f"{path}:5: audio: e.wav: is image, but the field expects audio" in text


def test_decompression_bomb_is_refused(ws: Workspace, tmp_path: Path) -> None:
    ws.settings.media.max_image_pixels = 10_000
    folder = tmp_path / "in"
    make_image(folder / "media" / "big.png", size=(200, 200), fmt="PNG")
    path = write_items(folder, [item_row("a", image="media/big.png")])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert "decompression bomb" in "\n".join(problems_of(exc))


def test_export_round_trips_into_a_new_workspace(make_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = make_workspace("first")
    first.add_person("ann1", ["author"])
    rows = [item_row("a"), item_row("b", answer="B"), item_row("c", group="g2", perturbed="image", image="media/c.png")]
    make_image(tmp_path / "in" / "media" / "c.png", colour="blue", fmt="PNG")
    import_items(first, write_items(tmp_path / "in", rows))
    export_items(first, tmp_path / "out" / "items.jsonl")
    second = make_workspace("second")
    second.add_person("ann1", ["author"])
    import_items(second, tmp_path / "out" / "items.jsonl")
    with first.session() as s1, second.session() as s2:
        a = {i.id: i.content_hash for i in s1.scalars(select(Item)).all()}
        b = {i.id: i.content_hash for i in s2.scalars(select(Item)).all()}
    assert a == b and len(a) == 3
    exported = [json.loads(line) for line in (tmp_path / "out" / "items.jsonl").read_text().splitlines()]
    assert all(row["image"].startswith("media/") for row in exported)
    with Image.open(tmp_path / "out" / exported[-1]["image"]) as img:
        assert img.format == "PNG"
