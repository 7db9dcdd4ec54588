"""An import measures what the gates would of each new medium (facts, audit signature) from the copy it stores,
and stores them in its own transaction: all of them, or none when it is refused or interrupted."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from curation import item_media, items
from curation.audit import media_facts
from curation.audit.tables import MediaFact, MediaSignature
from curation.errors import ValidationFailed
from curation.items import import_items
from curation.tables import Asset, Item
from curation.workspace import Workspace
from tests.media_factory import item_row, make_image, write_items


@pytest.fixture
def ws(workspace: Workspace) -> Workspace:
    workspace.add_person("ann1", ["author"])
    return workspace


def rows() -> list[dict[str, object]]:
    """Two groups: an image shared by sisters, a clip each, a Chinese item and a text+audio one."""
    out = [item_row(f"i{i}", group=f"g{i // 2}", image=f"media/g{i // 2}.jpg") for i in range(4)]
    out[1]["context"] = "他说：“这个建议真是太有帮助了。”"
    out[1]["language"] = "zh"
    out[3].update(modalities=["text", "audio"], image=None, taxonomy={"text": "pragmatic", "audio": "prosodic"})
    out[3]["provenance"] = {"audio": out[3]["provenance"]["audio"]}  # type: ignore[index]
    out[3]["ambiguous"] = ["text", "audio"]
    return out


def stored(ws: Workspace) -> tuple[dict[str, str], dict[str, dict[str, object]], set[str]]:
    with ws.session() as s:
        assets = {a.sha256: a.kind for a in s.execute(select(Asset)).scalars()}
        facts = {f.sha256: f.data for f in s.execute(select(MediaFact)).scalars()}
        signed = {m.sha256 for m in s.execute(select(MediaSignature)).scalars()}
    return assets, facts, signed


def test_every_new_medium_has_its_facts_and_signature_and_the_gate_measures_nothing(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_items(tmp_path / "in", rows())
    report = import_items(ws, path)
    assets, facts, signed = stored(ws)
    assert report.new_media == len(assets) and set(assets.values()) == {"audio", "image"}
    assert set(facts) == signed == set(assets)
    with ws.session() as s:
        rows_ = list(s.execute(select(Asset)).scalars())
    for asset in rows_:  # what the gate measures from the store file, to the last digit
        data = ws.asset_path(asset).read_bytes()
        assert facts[asset.sha256] == media_facts.measure(asset.kind, data, asset.original_name or "x")

    measured: list[str] = []
    monkeypatch.setattr(media_facts, "measure", lambda kind, data, name: measured.append(kind))
    assert set(media_facts.media_facts(ws, rows_)) == set(assets)
    assert measured == []


def test_a_reimport_measures_only_new_media(ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_items(tmp_path / "in", rows())
    import_items(ws, path)
    calls: list[str] = []
    real = item_media.measure_new
    monkeypatch.setattr(item_media, "measure_new", lambda kind, *a: calls.append(kind) or real(kind, *a))
    more = rows() + [item_row("i9", group="g9", image="media/g9.jpg")]
    make_image(tmp_path / "in" / "media" / "g9.jpg", colour="purple")
    assert import_items(ws, write_items(tmp_path / "in", more)).summary().endswith("2 new media file(s)")
    assert sorted(calls) == ["audio", "image"]
    assets, facts, signed = stored(ws)
    assert set(facts) == signed == set(assets)


def test_a_refused_import_stores_no_facts(ws: Workspace, tmp_path: Path) -> None:
    lines = rows()
    lines[2]["answer"] = "Z"
    with pytest.raises(ValidationFailed):
        import_items(ws, write_items(tmp_path / "in", lines))
    assert stored(ws) == ({}, {}, set())


def test_an_import_interrupted_while_writing_stores_no_facts(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = items.insert_rows

    def interrupted(s, table, new_rows):  # type: ignore[no-untyped-def]
        if table is Item:  # after the assets, their facts and signatures are in the transaction
            raise KeyboardInterrupt
        real(s, table, new_rows)

    monkeypatch.setattr(items, "insert_rows", interrupted)
    with pytest.raises(KeyboardInterrupt):
        import_items(ws, write_items(tmp_path / "in", rows()))
    assert stored(ws) == ({}, {}, set())
    monkeypatch.undo()
    import_items(ws, write_items(tmp_path / "in", rows()))
    assets, facts, signed = stored(ws)
    assert assets and set(facts) == signed == set(assets)
