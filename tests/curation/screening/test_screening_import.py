"""`import candidates`: validation of the whole file first, batched writes, idempotent and resumable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from curation.errors import ValidationFailed
from curation.screening import importer
from curation.screening.importer import import_candidates
from curation.screening.tables import Candidate
from curation.tables import Event
from omnicurate.demo.story_corpus import build_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return build_corpus(tmp_path_factory.mktemp("story"), books=10)


def _count(ws) -> int:  # type: ignore[no-untyped-def]
    with ws.session() as s:
        return s.execute(select(func.count()).select_from(Candidate)).scalar_one()


def test_import_is_idempotent_and_a_changed_line_is_an_update(workspace, corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = import_candidates(workspace, corpus.candidates, batch_rows=20)
    assert (first.created, first.updated, first.unchanged) == (corpus.transitions, 0, 0)
    assert first.batches == -(-corpus.transitions // 20)
    again = import_candidates(workspace, corpus.candidates)
    assert (again.created, again.updated, again.unchanged, again.batches) == (0, 0, corpus.transitions, 0)
    lines = corpus.candidates.read_text(encoding="utf-8").splitlines()
    changed = json.loads(lines[3])
    changed["next"]["text"] += " The end."
    edited = corpus.candidates.parent / "edited.jsonl"
    edited.write_text("\n".join([*lines[:3], json.dumps(changed), *lines[4:]]) + "\n", encoding="utf-8")
    third = import_candidates(workspace, edited)
    assert (third.created, third.updated, third.updated_ids) == (0, 1, [changed["id"]])
    with workspace.session() as s:
        row = s.get(Candidate, changed["id"])
        assert row.next_text.endswith("The end.")
        assert Path(row.next_image).is_file() and Path(row.next_image).is_absolute()
        events = s.execute(select(Event).where(Event.action == "import_candidates")).scalars().all()
    assert len(events) == first.batches + 1


def test_bad_lines_are_all_reported_and_nothing_is_written(workspace, corpus) -> None:  # type: ignore[no-untyped-def]
    lines = corpus.candidates.read_text(encoding="utf-8").splitlines()
    good = json.loads(lines[0])
    bad = corpus.candidates.parent / "bad.jsonl"
    missing_media = {**good, "id": "m1", "next": {"image": "media/none.jpg", "text": "x"}}
    escaping = {**good, "id": "m2", "current": {"image": "../outside.jpg", "text": "x"}}
    no_licence = {**good, "id": "m3", "source": {"collection": "storyweaver"}}
    bad.write_text(
        "\n".join(
            [lines[0], "{not json", json.dumps(missing_media), json.dumps(escaping), json.dumps(no_licence), lines[0]]
        )
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ValidationFailed) as caught:
        import_candidates(workspace, bad)
    found = [str(p) for p in caught.value.problems]
    assert found[0].startswith(f"{bad}:2: invalid JSON: ")
    assert found[1:] == [
        f"{bad}:3: next.image: media/none.jpg: file not found",
        f"{bad}:4: current.image: ../outside.jpg: path leaves the JSONL file's folder (through '..' or a symlink)",
        f"{bad}:5: source.license: required field is missing",
        f"{bad}:6: id: id {good['id']!r} already given on line 1",
    ]
    assert _count(workspace) == 0


def test_an_interrupted_import_keeps_its_batches_and_a_rerun_completes_it(workspace, corpus, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = importer.record_event
    calls = {"n": 0}

    def dies_in_third_batch(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(importer, "record_event", dies_in_third_batch)
    with pytest.raises(KeyboardInterrupt):
        import_candidates(workspace, corpus.candidates, batch_rows=10)
    assert _count(workspace) == 20  # two whole batches; the third rolled back
    monkeypatch.setattr(importer, "record_event", real)
    rest = import_candidates(workspace, corpus.candidates, batch_rows=10)
    assert (rest.created, rest.unchanged) == (corpus.transitions - 20, 20)
    assert _count(workspace) == corpus.transitions
