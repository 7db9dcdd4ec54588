"""Issue 13: the store and imports under hostile input and races (each test names the case it holds)."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest
import soundfile as sf
from sqlalchemy import select

from curation import db, item_media, items, media
from curation.config import Settings
from curation.decisions import decide
from curation.errors import CurateError, ValidationFailed, WorkspaceError
from curation.items import export_items, import_items
from curation.reviews import import_reviews, parse_reviews
from curation.tables import Asset, Item
from curation.workspace import Workspace
from tests.media_factory import item_row, make_tone, write_items


@pytest.fixture
def ws(workspace: Workspace) -> Workspace:
    workspace.add_person("ann1", ["author"])
    workspace.add_person("rev1", ["reviewer"])
    workspace.add_person("boss", ["maintainer"])
    return workspace


def problems(exc: pytest.ExceptionInfo[ValidationFailed]) -> list[str]:
    return [str(p) for p in exc.value.problems]


def assert_store_invariant(ws: Workspace) -> None:
    """Every stored file is named by its content's hash and its asset row describes it."""
    with ws.session() as s:
        assets = list(s.scalars(select(Asset)))
    for asset in assets:
        path = ws.asset_path(asset)
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == asset.sha256 == path.stem
        assert len(data) == asset.size_bytes
        if asset.kind == "audio":
            assert sf.info(str(path)).frames / asset.sample_rate == pytest.approx(asset.duration_s, abs=1e-3)


def stored_files(ws: Workspace) -> list[Path]:
    return [p for p in ws.media.root.rglob("*") if p.is_file() and ".staging" not in p.parts]


# ----- case 1: a media file changed while an import runs ---------------------------------------------------------
def test_case1_a_file_changed_between_validation_and_copy_is_refused(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a clip of the same size is stored already, so this one is hashed first (it might be that clip) and copied
    # after: the window this test strikes in (a file of a size the store lacks is hashed as it is copied)
    import_items(ws, write_items(tmp_path / "before", [item_row("z", group="g0")]))
    path = write_items(tmp_path / "in", [item_row("a")])
    clip = tmp_path / "in" / "media" / "a.wav"
    assert clip.stat().st_size == (tmp_path / "before" / "media" / "z.wav").stat().st_size
    real_hash = item_media.sha256_file

    def hash_then_rewrite(target: Path) -> str:
        digest = real_hash(target)
        if target == clip.resolve():
            make_tone(clip, freq=990.0, seconds=2.0)  # the writer strikes right after validation hashed it
        return digest

    monkeypatch.setattr(item_media, "sha256_file", hash_then_rewrite)
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert any("a.wav: the file changed while it was being imported" in p for p in problems(exc))
    assert len(stored_files(ws)) == 2  # the earlier import's image and clip: nothing of this one
    assert [i.id for i in ws.session().scalars(select(Item))] == ["z"]


def test_case1_a_file_new_to_the_store_is_read_once(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No stored asset has its size, so it is hashed as it is copied: no window between hash and copy."""
    path = write_items(tmp_path / "in", [item_row("a"), item_row("b")])

    def no_second_read(target: Path) -> str:
        raise AssertionError(f"{target.name} was hashed before its copy")

    monkeypatch.setattr(items, "sha256_file", no_second_read)
    report = import_items(ws, path)
    assert report.created == ["a", "b"]
    assert len(stored_files(ws)) == 3  # one image shared by both, two clips
    assert_store_invariant(ws)


def test_case1_a_file_changed_during_the_copy_is_refused(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_items(tmp_path / "in", [item_row("a")])
    clip = tmp_path / "in" / "media" / "a.wav"
    real_copy = media.copy_hashing

    def copy_then_append(source, target: Path):  # type: ignore[no-untyped-def]
        result = real_copy(source, target)
        if Path(source.name) == clip.resolve():
            with clip.open("ab") as fh:
                fh.write(b"\0" * 64)  # a write lands while the file is open for the copy
        return result

    monkeypatch.setattr(media, "copy_hashing", copy_then_append)
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert any("changed while it was being imported" in p for p in problems(exc))
    assert stored_files(ws) == []


def test_case1_a_file_changed_after_its_copy_leaves_the_store_consistent(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_items(tmp_path / "in", [item_row("a")])
    clip = tmp_path / "in" / "media" / "a.wav"
    original = hashlib.sha256(clip.read_bytes()).hexdigest()
    real_check = items._check_against_store

    def rewrite_then_check(*args):  # type: ignore[no-untyped-def]
        make_tone(clip, freq=990.0, seconds=2.0)  # between validation and the database write
        return real_check(*args)

    monkeypatch.setattr(items, "_check_against_store", rewrite_then_check)
    import_items(ws, path)
    assert ws.item("a").audio == original
    assert_store_invariant(ws)


# ----- case 2: line separators in text; and the NUL decision ------------------------------------------------------
SEPARATORS = "\u2028\u2029\x85\x0c\x1c\x1d\x1e\x0b\r"


def test_case2_line_separators_round_trip_and_do_not_shift_line_numbers(ws: Workspace, tmp_path: Path) -> None:
    context = f"Sure{SEPARATORS}that was 🎉 helpful.\nReally."
    path = write_items(tmp_path / "in", [item_row("a", context=context)])
    import_items(ws, path)
    assert ws.item("a").context == context
    out = tmp_path / "out" / "items.jsonl"
    export_items(ws, out)
    exported = out.read_bytes()
    assert exported.count(b"\n") == 1 and "\u2028".encode() not in exported
    assert json.loads(exported)["context"] == context
    bad = tmp_path / "in" / "two.jsonl"
    bad.write_text(json.dumps(item_row("a", context=context), ensure_ascii=False) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, bad)
    assert [p.line for p in exc.value.problems] == [2]


def test_nul_in_text_is_refused_with_file_line_and_field_on_every_database(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a"), item_row("b", context="before\x00after")])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert problems(exc) == [
        f"{path}:2: context: contains a NUL character (\\u0000), which no text field may hold; remove it"
    ]
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text(
        json.dumps({"item": "a", "stage": "grammar", "reviewer": "rev1", "verdict": "pass", "note": "x\x00"}) + "\n"
    )
    assert [str(p) for p in parse_reviews(reviews)[1]] == [
        f"{reviews}:1: note: contains a NUL character (\\u0000), which no text field may hold; remove it"
    ]


def test_an_unpaired_surrogate_is_refused_with_file_line_and_field_and_a_pair_is_kept(
    ws: Workspace, tmp_path: Path
) -> None:
    """JSON's escapes can write half of a surrogate pair, which is no character: no database keeps it as text
    (an import of it once ended in a traceback on SQLite), so it is refused like NUL. A whole pair is one
    character."""
    folder = tmp_path / "in"
    write_items(folder, [item_row("a"), item_row("b")])
    lines = [json.dumps(item_row("a", context="grinning \U0001f600")), json.dumps(item_row("b"))]
    lines[1] = lines[1].replace('"B": "sarcastic"', '"B": "sar\\udc00castic"')
    assert "\\ud83d\\ude00" in lines[0] and "\\udc00" in lines[1]
    path = folder / "items.jsonl"
    path.write_text("\n".join(lines) + "\n")
    message = (
        "contains an unpaired surrogate (an escape from \\ud800 to \\udfff without its pair), which is not a "
        "character; write the character itself, or both halves of its pair"
    )
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert problems(exc) == [f"{path}:2: options.B: {message}"]
    assert ws.session().scalars(select(Item)).all() == []
    path.write_text(lines[0] + "\n")
    import_items(ws, path)
    assert ws.item("a").context == "grinning \U0001f600"
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text(
        '{"item": "a", "stage": "grammar", "reviewer": "rev1", "verdict": "pass", "note": "half \\uD83D"}\n'
    )
    assert [str(p) for p in parse_reviews(reviews)[1]] == [f"{reviews}:1: note: {message}"]


# ----- case 9: tracebacks become named errors -------------------------------------------------------------------
def test_case9_json_nested_100000_deep_is_a_named_problem(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert problems(exc) == [f"{path}:1: invalid JSON: nested too deeply (at most 32 levels); flatten it"]


def test_case9_a_write_lock_held_too_long_is_a_named_error(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db, "WRITE_LOCK_TIMEOUT_S", 1)
    other = Workspace.open(ws.root)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with ws.writing() as s:
            s.execute(select(Item.id))  # SQLite takes its lock at the first statement
            holding.set()
            release.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert holding.wait(10)
        with pytest.raises(WorkspaceError, match="held the workspace's write lock for over 1 s"):
            other.add_person("late", ["author"])
    finally:
        release.set()
        thread.join()
        other.close()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("not a url", "is not a database URL"),
        ("mysql://u@h/db", "supports SQLite"),
        ("postgresql+nosuchdriver://u@h/db", "driver"),
        ("postgresql+psycopg://nobody@127.0.0.1:1/none", "cannot open the database"),
    ],
)
def test_case9_bad_database_urls_in_curate_toml_are_named(tmp_path: Path, url: str, expected: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    settings = Settings()
    settings.database.url = url
    settings.save(root / "curate.toml")
    with pytest.raises(WorkspaceError, match=expected):
        Workspace.open(root)


def test_case9_init_on_an_existing_file_is_named(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    with pytest.raises(WorkspaceError, match="is a file, not a folder"):
        Workspace.init(target)


def test_case9_an_unwritable_export_path_is_named(ws: Workspace, tmp_path: Path) -> None:
    import_items(ws, write_items(tmp_path / "in", [item_row("a")]))
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(WorkspaceError, match="cannot write the export"):
        export_items(ws, blocker / "out" / "items.jsonl")


def test_case9_concurrent_normalize_stores_each_derivative_once(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curation.audit import normalize

    import_items(ws, write_items(tmp_path / "in", [item_row("a")]))  # 16 kHz clips: normalizing makes new files
    real_store = normalize._store
    raced: list[bool] = []

    def other_writer_first(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not raced:
            raced.append(True)
            other = Workspace.open(ws.root)
            try:
                normalize.normalize_workspace(other)  # the second `media normalize`, finishing first
            finally:
                other.close()
        return real_store(*args, **kwargs)

    monkeypatch.setattr(normalize, "_store", other_writer_first)
    report = normalize.normalize_workspace(ws)
    assert raced and any(a.created for a in report.assets)
    assert_store_invariant(ws)


# ----- case 6: writes stay inside the named target ------------------------------------------------------------
def test_case6_export_into_a_folder_writes_only_inside_it(ws: Workspace, tmp_path: Path) -> None:
    import_items(ws, write_items(tmp_path / "in", [item_row("a")]))
    target = tmp_path / "target"
    target.mkdir()
    export_items(ws, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "target", "ws"]
    assert (target / "items.jsonl").is_file() and len(list((target / "media").iterdir())) == 2
    with pytest.raises(ValidationFailed, match="media-dir"):
        export_items(ws, target / "items.jsonl", media_dir="../escape")
    assert not (tmp_path / "escape").exists()


# ----- case 10: the smaller ones --------------------------------------------------------------------------------
def test_case10_bad_utf8_is_reported_by_file_and_line(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a")])
    path.write_bytes(path.read_bytes() + b'{"id": "\xff"}\n')
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert problems(exc) == [f"{path}:2: not UTF-8 text (invalid start byte at byte 9)"]


def test_case10_checklist_options_and_parse_errors_are_reported_together(ws: Workspace, tmp_path: Path) -> None:
    import_items(ws, write_items(tmp_path / "in", [item_row("a")]))
    views = ["text", "image", "audio", "text+image", "text+audio", "image+audio", "text+image+audio"]
    checklist = {"item": "a", "stage": "subset_checklist", "reviewer": "rev1", "consistent": {v: ["Z"] for v in views}}
    path = tmp_path / "reviews.jsonl"
    path.write_text("{oops\n" + json.dumps(checklist) + "\n")
    with pytest.raises(ValidationFailed) as exc:
        import_reviews(ws, path)
    lines = {p.line for p in exc.value.problems}
    assert lines == {1, 2} and any("Z are not options of 'a'" in p for p in problems(exc))


@pytest.mark.parametrize("score", [True, "4", 4.5])
def test_case10_scores_must_be_whole_json_numbers(tmp_path: Path, score: object) -> None:
    path = tmp_path / "reviews.jsonl"
    scores = {"naturalness": score, "clarity": 4, "artefacts": 4}
    path.write_text(json.dumps({"item": "a", "stage": "audio_signoff", "reviewer": "rev1", "scores": scores}) + "\n")
    _, found = parse_reviews(path)
    assert [(p.line, p.field) for p in found] == [(1, "scores.naturalness")]


def test_case10_a_truncated_wav_is_refused(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a")])
    clip = tmp_path / "in" / "media" / "a.wav"
    clip.write_bytes(clip.read_bytes()[: clip.stat().st_size // 2])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert any("a.wav: audio is truncated" in p for p in problems(exc))


def test_case10_a_folder_as_media_path_is_named(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a", audio="media")])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert f"{path}:1: audio: media: is a folder, not a media file" in problems(exc)


def test_case10_absurd_loudness_targets_are_refused(tmp_path: Path) -> None:
    for value in ("1000", "nan"):
        path = tmp_path / "curate.toml"
        path.write_text(f"[media]\naudio_lufs = {value}\naudio_sample_rate = 0\n")
        with pytest.raises(ValidationFailed) as exc:
            Settings.load(path)
        assert {p.field for p in exc.value.problems} == {"media.audio_lufs", "media.audio_sample_rate"}


def test_case10_decide_discard_refuses_stage_and_verdict(ws: Workspace, tmp_path: Path) -> None:
    import_items(ws, write_items(tmp_path / "in", [item_row("a")]))
    with pytest.raises(ValidationFailed, match="belong to override"):
        decide(ws, "a", "boss", "discard", "off topic", stage="grammar", verdict="pass")


@pytest.mark.parametrize("name", ["ann smith", "", "x" * 201, "ann/1"])
def test_case10_person_names_must_be_usable_in_review_files(ws: Workspace, name: str) -> None:
    with pytest.raises(ValidationFailed, match="cannot name a person"):
        ws.add_person(name, ["reviewer"])


def test_case10_text_is_limited_before_it_reaches_the_audit(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a", context="word " * 5_000)])
    with pytest.raises(ValidationFailed) as exc:
        import_items(ws, path)
    assert problems(exc) == [f"{path}:1: context: text longer than the limit of 20,000 characters; shorten it"]
    huge = tmp_path / "in" / "huge.jsonl"
    huge.write_text(json.dumps(item_row("b", context="x" * (2 << 20))) + "\n")
    with pytest.raises(ValidationFailed, match="exceeds the limit of 1,048,576"):
        import_items(ws, huge)


def test_data_errors_from_the_database_are_curate_errors(ws: Workspace) -> None:
    """A value the database refuses (here: too long for its column on PostgreSQL) is a named error."""
    from curation.tables import Event

    if ws.engine.dialect.name != "postgresql":
        pytest.skip("SQLite does not enforce column lengths")
    with pytest.raises(CurateError, match="the database refused a value"), ws.writing() as s:
        s.add(Event(actor="x" * 1000, action="a", subject="s", before=None, after=None))


def test_reimport_restores_a_store_file_that_went_missing(ws: Workspace, tmp_path: Path) -> None:
    path = write_items(tmp_path / "in", [item_row("a")])
    import_items(ws, path)
    lost = ws.media.path(ws.item("a").audio, ".wav")
    lost.unlink()
    import_items(ws, path)
    assert lost.is_file()
    assert_store_invariant(ws)
