"""The doors that still bypassed the shared reader (issue 40, second half), through `curate` as users meet them:
replay files named in curate.toml, guidelines, adjudication checklists, story study releases and subsets, ratings
files of `curate stats`, release notes; keys given twice in one JSON object; keys that hold a line break. Each
problem is one line (FILE:LINE: field: problem, or FILE: field: problem for a whole JSON document), exit 2, never a
traceback, and a refused run stores nothing, on both databases."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from curation.config import CONFIG_NAME, ProbeSettings, Settings
from curation.screening.tables import Candidate
from curation.study.tables import StoryStudy
from curation.tables import Asset, Event, Item, ReviewRecord
from curation.workspace import Workspace
from devsupport.media_factory import item_row, write_items
from exports.tables import Release
from tests.hostile_records import TRACEBACK, assert_named_refusal
from tests.omnicurate.test_cli_strict_inputs import candidates_file, curate, refused, stored

FIFO, DEVICE, FOLDER = (
    "is a FIFO (a named pipe), not a regular file",
    "is a device, not a regular file",
    "is a folder, not a file",
)


def odd(folder: Path, kind: str, name: str = "odd.jsonl") -> tuple[Path, str]:
    """FOLDER/NAME made a path that is not a regular file: a FIFO nobody writes to, a link to /dev/zero, or a
    folder; with what `curate` calls it."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        return path, FIFO
    if kind == "device":
        path.symlink_to("/dev/zero")
        return path, DEVICE
    path.mkdir()
    return path, FOLDER


def remove(path: Path) -> None:
    path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()


ODD = ["fifo", "device", "folder"]


def events(ws: Workspace) -> int:
    return stored(ws, Event)


def one_line_each(problems: list[str], file: Path) -> None:
    """Every problem names FILE first and no repr or traceback: a key's line break never splits one."""
    assert problems, problems
    for problem in problems:
        assert problem.startswith(str(file)), problems
        assert not TRACEBACK.search(problem), problem


# ----- 1. replay files named in curate.toml -------------------------------------------------------------------
@pytest.mark.parametrize("kind", ODD)
def test_a_replay_file_from_curate_toml_is_named_as_what_it_is(workspace: Workspace, tmp_path: Path, kind: str) -> None:
    """`--probe NAME` ([checker.probes.NAME] spec) and [screen.model] backend reach the replay readers without the
    command line's path rule: they name a FIFO, a device or a folder themselves, never "does not exist"."""
    path, what = odd(tmp_path, kind)
    settings = Settings.load(workspace.root / CONFIG_NAME)
    settings.checker.probes = {"recorded": ProbeSettings(spec=f"replay:{path}")}
    settings.screen.model.backend = f"replay:{path}"
    settings.screen.steps = ["annotate"]
    settings.save(workspace.root / CONFIG_NAME)
    before = events(workspace)
    for args in (("check", "--probe", "recorded"), ("screen",)):
        problems = refused(workspace, *args)
        assert problems == [f"{path}: replay file: {what}; give the file itself"], (args, problems)
    assert events(workspace) == before
    settings.screen.model.backend = f"replay:{tmp_path / 'absent.jsonl'}"
    settings.save(workspace.root / CONFIG_NAME)
    result = curate(workspace, "screen")
    assert result.exit_code == 2 and f"replay file {tmp_path / 'absent.jsonl'} does not exist" in result.stderr


# ----- 2. guidelines (`curate ls push` sends them as the project's instructions) --------------------------------
@pytest.mark.parametrize(
    ("content", "shown"),
    [
        ("fifo", f"grammar.md: guidelines: {FIFO}"),
        ("device", f"grammar.md: guidelines: {DEVICE}"),
        ("folder", f"grammar.md: guidelines: {FOLDER}"),
        (b"# Rules\n\ncaf\xe9\n", "grammar.md:3: guidelines: not UTF-8 text (invalid continuation byte at byte 4)"),
        (b"# Rules\nA\x00B\n", "grammar.md:2: guidelines: contains a NUL character"),
        (b"x" * 256_001, "grammar.md: guidelines: larger than the limit of 256,000 bytes; shorten it"),
    ],
)
def test_guidelines_that_are_no_readable_page_are_named_before_anything_is_pushed(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: Any, shown: str
) -> None:
    folder = workspace.root / "guidelines"
    if isinstance(content, bytes):
        folder.mkdir()
        (folder / "grammar.md").write_bytes(content)
    else:
        odd(folder, content, "grammar.md")
    monkeypatch.setenv("LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT", str(tmp_path / "ls-root"))
    monkeypatch.setenv("LABEL_STUDIO_URL", "http://127.0.0.1:9")  # never reached: the refusal comes first
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "unused")
    [problem] = refused(workspace, "ls", "push", "grammar")
    assert problem.startswith(f"{folder}/{shown}"), problem
    assert events(workspace) == 0


# ----- 2. adjudication checklists -----------------------------------------------------------------------------
CHECKLIST_CASES: list[tuple[str, bytes | str, str]] = [
    ("fifo", "fifo", f"--checklist: {FIFO}; give the file itself"),
    ("device", "device", f"--checklist: {DEVICE}; give the file itself"),
    ("folder", "folder", f"--checklist: {FOLDER}; give the file itself"),
    ("nan", b'{"text": ["A"], "image": NaN}', "image: NaN is not a number JSON allows"),
    ("twice", b'{"text": ["A"], "text": ["B"]}', "text: given twice in one object; keep one of them"),
    ("twice inside", b'{"consistent": {"text": ["A"], "text": []}}', "consistent.text: given twice in one object"),
    ("unknown field", b'{"consistent": {"text": ["A"]}, "verdict": "pass"}', "verdict: unknown field"),
    ("bool", b'{"text": [true]}', "text.0: Input should be a valid string"),
    ("number", b'{"text": "A"}', "text: Input should be a valid list"),
    ("line break in a view", b'{"te\\nxt": ["A"]}', '"te\\nxt": unknown view; views are text, image, audio'),
    ("not JSON", b'{"text": ["A"]', "1: invalid JSON"),
    ("not UTF-8", b'{"text": ["\xe9"]}', "1: not UTF-8 text"),
    ("too large", b" " * (64 * 1024 + 1), "larger than the limit of 65,536 bytes"),
    ("a list", b'[["A"]]', "expected a JSON object of view -> option keys"),
]


@pytest.mark.parametrize(("name", "content", "shown"), CHECKLIST_CASES, ids=[c[0] for c in CHECKLIST_CASES])
def test_an_adjudication_checklist_is_read_strictly(
    workspace: Workspace, tmp_path: Path, name: str, content: bytes | str, shown: str
) -> None:
    """The file is refused whole, by file and field, before any item is looked up: nothing is recorded."""
    if isinstance(content, str):
        path, _ = odd(tmp_path, content, "consensus.json")
    else:
        path = tmp_path / "consensus.json"
        path.write_bytes(content)
    args = ("adjudicate", "a", "--checklist", str(path), "--by", "maya", "--reason", "r")
    problems = refused(workspace, *args)
    separator = "" if shown[0].isdigit() else " "
    assert problems[0].startswith(f"{path}:{separator}{shown}"), problems
    one_line_each(problems, path)
    assert stored(workspace, ReviewRecord) == 0 and events(workspace) == 0


# ----- 2. ratings of `curate stats` ---------------------------------------------------------------------------
RATINGS_CSV: list[tuple[str, bytes, str]] = [
    ("NaN as text", b"unit,coder,value\nu1,A,1\nu1,B,NaN\n", "3: value: NaN is not a rating (not a finite number)"),
    ("infinity as text", b"unit,coder,value\nu1,A,inf\nu1,B,1\n", "2: value: inf is not a rating"),
    ("too large a number", b"unit,coder,value\nu1,A,1e400\nu1,B,1\n", "2: value: 1e400 is not a rating"),
    ("unknown column", b"unit,coder,value,score\nu1,A,1,2\n", "1: score: unknown column; the columns are unit, coder"),
    ("column twice", b"unit,coder,value,value\nu1,A,1,2\n", "1: value: column given twice; keep one"),
    ("short row", b"unit,coder,value\nu1,A\nu1,B,2\n", "2: 2 fields; the header names 3"),
    ("long row", b"unit,coder,value\nu1,A,1,extra\n", "2: 4 fields; the header names 3"),
    ("not UTF-8", b"unit,coder,value\nu1,A,caf\xe9\n", "2: not UTF-8 text (unexpected end of data at byte 9)"),
    ("NUL", b"unit,coder,value\nu1,A,1\x00\n", "2: contains a NUL character"),
    ("line too long", b"unit,coder,value\nu1,A," + b"9" * (1 << 20) + b"\n", "2: line of 1,048,581 bytes exceeds"),
    ("field too long", b'unit,coder,value\nu1,A,"' + b"x" * 200_000 + b'"\n', "2: not CSV (field larger than"),
    ("no header", b"u1,A,1\n", "1: header: header lacks unit, coder, value"),
]
RATINGS_JSONL: list[tuple[str, bytes, str]] = [
    ("NaN", b'{"unit": "u1", "coder": "A", "value": NaN}', "1: value: NaN is not a number JSON allows"),
    ("Infinity", b'{"unit": "u1", "coder": "A", "value": -Infinity}', "1: value: -Infinity (or a number too"),
    ("1e400", b'{"unit": "u1", "coder": "A", "value": 1e400}', "1: value: Infinity (or a number too large"),
    ("NaN as text", b'{"unit": "u1", "coder": "A", "value": "nan"}', "1: value: nan is not a rating"),
    ("unknown key", b'{"unit": "u1", "coder": "A", "value": 1, "note": "x"}', "1: note: unknown field; the fields"),
    ("key with a break", b'{"unit": "u1", "coder": "A", "value": 1, "a\\u2028b": 1}', '1: "a\\u2028b": unknown field'),
    ("key twice", b'{"unit": "u1", "coder": "A", "value": 1, "value": 5}', "1: value: given twice in one object"),
    ("bool", b'{"unit": "u1", "coder": "A", "value": true}', "1: value: must be a number or a text, not true; write"),
    ("null unit", b'{"unit": null, "coder": "A", "value": 1}', "1: unit: must be a text or a number, not null"),
    ("list", b'{"unit": "u1", "coder": ["A"], "value": 1}', "1: coder: must be a number or a text, not a list"),
    ("nested too deeply", b'{"unit": "u1", "coder": "A", "value": ' + b"[" * 40 + b"]" * 40 + b"}", "1: value."),
    ("not an object", b'["u1", "A", 1]', "1: each line must be a JSON object"),
]


@pytest.mark.parametrize(
    ("suffix", "name", "content", "shown"),
    [(".csv", *case) for case in RATINGS_CSV] + [(".jsonl", *case) for case in RATINGS_JSONL],
    ids=[f"csv-{c[0]}" for c in RATINGS_CSV] + [f"jsonl-{c[0]}" for c in RATINGS_JSONL],
)
def test_a_ratings_file_is_read_strictly(tmp_path: Path, suffix: str, name: str, content: bytes, shown: str) -> None:
    """A NaN rating is a named error, never a NaN statistic; unknown columns and keys are refused by name."""
    from typer.testing import CliRunner

    from omnicurate.cli.main import app

    path = tmp_path / f"ratings{suffix}"
    path.write_bytes(content + (b"\n" if not content.endswith(b"\n") else b""))
    for statistic in ("alpha", "fleiss"):
        result = CliRunner().invoke(app, ["stats", statistic, str(path), "--json"], catch_exceptions=False)
        assert result.exit_code == 2, result.output
        assert f"{path}:{shown}" in result.stderr, result.stderr
        assert "nan" not in result.stdout.lower() and result.stdout == ""
        assert_named_refusal(result.stderr, path, content.count(b"\n") + 1)


@pytest.mark.parametrize("kind", ODD)
def test_a_ratings_path_that_is_no_file_is_named(tmp_path: Path, kind: str) -> None:
    from typer.testing import CliRunner

    from omnicurate.cli.main import app

    path, what = odd(tmp_path, kind, "ratings.csv")
    for command in (["stats", "kappa", str(path)], ["stats", "judge", str(path)]):
        result = CliRunner().invoke(app, command, catch_exceptions=False)
        assert result.exit_code == 2, result.output
        assert f"{path}: {what}" in result.stderr or (kind == "folder" and "is a directory" in result.stderr)


def test_a_judge_file_refuses_unknown_columns_and_nan(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from omnicurate.cli.main import app

    scores = tmp_path / "scores.jsonl"
    scores.write_text('{"system": "P", "item": "i1", "human": 4, "judge": NaN, "extra": 1}\n')
    result = CliRunner().invoke(app, ["stats", "judge", str(scores)], catch_exceptions=False)
    assert result.exit_code == 2
    assert f"{scores}:1: judge: NaN is not a number JSON allows" in result.stderr
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("item,a,b,human,winner\ni1,x,y,A,x\n")
    result = CliRunner().invoke(app, ["stats", "judge", str(pairs)], catch_exceptions=False)
    assert result.exit_code == 2
    assert f"{pairs}:1: winner: unknown column; the columns are item, a, b, human, judge" in result.stderr


# ----- 2. release notes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "shown"),
    [
        ("fifo", f": --notes: {FIFO}; give the file itself"),
        ("device", f": --notes: {DEVICE}; give the file itself"),
        ("folder", f": --notes: {FOLDER}; give the file itself"),
        (b"# Notes\n\nA\x00B\n", ":3: --notes: contains a NUL character"),
        (b"x" * 256_001, ": --notes: larger than the limit of 256,000 bytes"),
        (b"ok\n\xff\n", ":2: --notes: not UTF-8 text (invalid start byte at byte 1)"),
    ],
)
def test_release_notes_are_read_strictly_and_nothing_is_built(
    workspace: Workspace, tmp_path: Path, content: Any, shown: str
) -> None:
    if isinstance(content, bytes):
        path = tmp_path / "notes.md"
        path.write_bytes(content)
    else:
        path, _ = odd(tmp_path, content, "notes.md")
    [problem] = refused(workspace, "release", "build", "0.1.0", "--notes", str(path))
    assert problem.startswith(f"{path}{shown}"), problem
    assert stored(workspace, Release) == 0 and not (workspace.root / "releases").exists()


# ----- 2. story study releases --------------------------------------------------------------------------------
def story_release(folder: Path, lines: list[bytes], manifest: dict[str, Any] | None = None) -> Path:
    """A release folder as far as the study reads it: manifest.json listing data/transitions.jsonl by hash."""
    data = folder / "data" / "transitions.jsonl"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_bytes(b"".join(line + b"\n" for line in lines))
    files = [{"path": "data/transitions.jsonl", "sha256": hashlib.sha256(data.read_bytes()).hexdigest()}]
    document = {"kind": "story_transition", "name": "S", "version": "0.1.0", "files": files} | (manifest or {})
    (folder / "manifest.json").write_text(json.dumps(document))
    return folder


def transition(n: int, **changes: Any) -> dict[str, Any]:
    return {
        "id": f"t{n}",
        "title": "T",
        "current_text": "One.",
        "current_image": "media/a.png",
        "next_text": "Two.",
        "next_image": "media/b.png",
        "book_meta": {},
        "conditions": {},
        "speech": {},
    } | changes


GOOD = [json.dumps(transition(n)).encode() for n in range(3)]
RELEASE_CASES: list[tuple[str, list[bytes], dict[str, Any] | None, str]] = [
    ("unknown field", [GOOD[0], json.dumps(transition(1, score=3)).encode()], None, "data/transitions.jsonl:2: score"),
    ("NaN", [GOOD[0], GOOD[1].replace(b'"book_meta": {}', b'"book_meta": {"age": NaN}')], None, ":2: book_meta.age"),
    ("key twice", [GOOD[0].replace(b'"title": "T"', b'"title": "T", "title": "U"')], None, ":1: title: given twice"),
    ("id twice", [GOOD[0], GOOD[0]], None, "data/transitions.jsonl:2: id: given twice (first on line 1)"),
    ("page as text", [json.dumps(transition(0, page="3")).encode()], None, ":1: page: Input should be a valid integer"),
    ("key with a break", [GOOD[0].replace(b'{"id"', b'{"x\\ny": 1, "id"')], None, ':1: "x\\ny": unknown field'),
    ("kind", GOOD, {"kind": 7}, "manifest.json: kind: Input should be a valid string"),
    ("files", GOOD, {"files": [{"path": "data/transitions.jsonl", "sha256": None}]}, "manifest.json: files.0.sha256"),
]


@pytest.mark.parametrize(("name", "lines", "manifest", "shown"), RELEASE_CASES, ids=[c[0] for c in RELEASE_CASES])
def test_a_story_release_is_read_strictly(
    workspace: Workspace, tmp_path: Path, name: str, lines: list[bytes], manifest: dict[str, Any] | None, shown: str
) -> None:
    release = story_release(tmp_path / "release", lines, manifest)
    problems = refused(workspace, "story", "study", "window", "--release", str(release), "--size", "1")
    assert any(p.startswith(str(release)) and shown in p for p in problems), problems
    one_line_each(problems, release)
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(json.dumps({"system": "s1", "transition": "t0", "text": "x"}) + "\n")
    args = ("story", "study", "create", "s", "--release", str(release), "--outputs", str(outputs), "--size", "1")
    assert refused(workspace, *args) == problems
    assert stored(workspace, StoryStudy) == 0 and events(workspace) == 0


@pytest.mark.parametrize("kind", ODD)
def test_a_story_release_file_that_is_no_file_is_named(workspace: Workspace, tmp_path: Path, kind: str) -> None:
    release = story_release(tmp_path / "release", GOOD)
    for name in ("manifest.json", "data/transitions.jsonl"):
        saved = (release / name).read_bytes()
        (release / name).unlink()
        target, what = odd(release, kind, name)
        problems = refused(workspace, "story", "study", "window", "--release", str(release), "--size", "1")
        assert problems == [f"{target}: {what}; give the file itself"], problems
        remove(target)
        target.write_bytes(saved)


def stored_study(ws: Workspace, release: Path) -> None:
    manifest_sha = hashlib.sha256((release / "manifest.json").read_bytes()).hexdigest()
    with ws.writing() as s:
        s.add(
            StoryStudy(
                name="s1",
                release_name="S",
                release_version="0.1.0",
                manifest_sha256=manifest_sha,
                window=["t0"],
                transitions=["t0", "t1", "t2"],
                tracks=["text"],
                systems=["A"],
                pages={},
                created_by="cli",
            )
        )


@pytest.mark.parametrize(
    ("audit", "shown"),
    [
        (b'{"clusters": [{"items": ["t1", NaN]}]}', "audit.json: clusters.0.items.1: NaN is not a number"),
        (b'{"clusters": [{"items": ["t1"], "items": ["t2"]}]}', "audit.json: clusters.0.items: given twice"),
        (b'{"clusters": [{"items": "t1"}]}', "audit.json: clusters.0.items: Input should be a valid list"),
        (b'{"clusters": [{"items": [1]}]}', "audit.json: clusters.0.items.0: Input should be a valid string"),
        ("fifo", f"audit.json: {FIFO}"),
    ],
)
def test_a_study_sensitivity_reads_the_release_audit_and_the_subset_strictly(
    workspace: Workspace, tmp_path: Path, audit: Any, shown: str
) -> None:
    release = story_release(tmp_path / "release", GOOD)
    stored_study(workspace, release)
    if isinstance(audit, bytes):
        (release / "audit.json").write_bytes(audit)
    else:
        odd(release, audit, "audit.json")
    [problem] = refused(workspace, "story", "study", "sensitivity", "s1", "--release", str(release))
    assert problem.startswith(f"{release}/{shown}"), problem
    fifo, what = odd(tmp_path, "fifo", "fifo.txt")
    assert refused(workspace, "story", "study", "sensitivity", "s1", "--exclude", str(fifo)) == [
        f"{fifo}: --exclude: {what}; give the file itself"
    ]
    subset = tmp_path / "subset.txt"
    subset.write_bytes(b"t1\n# a comment\nt\x002\nt3\n")
    assert refused(workspace, "story", "study", "sensitivity", "s1", "--exclude", str(subset)) == [
        f"{subset}:3: --exclude: contains a NUL character, which no text may hold; remove it"
    ]
    subset.write_bytes(b"t1\n\nt9 # not in the study\n")
    assert refused(workspace, "story", "study", "sensitivity", "s1", "--exclude", str(subset)) == [
        f"{subset}:3: t9 is not a transition of study 's1'"
    ]


# ----- 4. a key that holds a line break stays on its line ------------------------------------------------------
@pytest.mark.parametrize("key", ["bad\nkey", "bad\u2028key", "a.b", "", 'quo"te', "tab\there", "nel\x85"])
def test_an_unknown_key_with_a_line_break_is_shown_escaped_on_one_line(
    workspace: Workspace, tmp_path: Path, key: str
) -> None:
    workspace.add_person("ann1", ["author"])
    row = item_row("a1")
    row[key] = 1
    path = write_items(tmp_path / "in", [row])
    problems = refused(workspace, "import", "items", str(path))
    assert problems == [f"{path}:1: {json.dumps(key)}: unknown field"], problems
    assert stored(workspace, Item) == 0


# ----- 5. a key given twice in one object ----------------------------------------------------------------------
def test_a_key_given_twice_is_refused_by_line_at_every_parser(workspace: Workspace, tmp_path: Path) -> None:
    """json (items) and orjson (candidates) read a key given twice as its last value: both are refused instead,
    naming the field, the whole file storing nothing."""
    workspace.add_person("ann1", ["author"])
    path = write_items(tmp_path / "in", [item_row("a1"), item_row("a2"), item_row("a3")])
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"answer": "A"', '"answer": "A", "answer": "B"', 1)
    lines[2] = lines[2].replace('"license": "CC0-1.0"', '"license": "CC0-1.0","license": "MIT"', 1)
    path.write_text("\n".join(lines) + "\n")
    assert refused(workspace, "import", "items", str(path)) == [
        f"{path}:2: answer: given twice in one object; keep one of them",
        f"{path}:3: provenance.image.license: given twice in one object; keep one of them",
    ]
    assert stored(workspace, Item) == 0 and stored(workspace, Asset) == 0

    candidates = candidates_file(tmp_path / "cand", ("a.jpg", "b.jpg"))
    line = candidates.read_text(encoding="utf-8").strip()
    spaced = line.replace('"page": 0', '"page" : 0, "page" : 1', 1).replace("p00", "p03", 1)  # space, then ':'
    nested = line.replace('"title": "T"', '"title": "T", "title": "U"', 1).replace('"b1-p00"', '"b1-p01"', 1)
    inner = line.replace('"collection": "c"', '"collection": "c", "collection": "d"', 1).replace("p00", "p02", 1)
    candidates.write_text("\n".join([line, spaced, nested, inner]) + "\n", encoding="utf-8")
    assert refused(workspace, "import", "candidates", str(candidates)) == [
        f"{candidates}:2: page: given twice in one object; keep one of them",
        f"{candidates}:3: title: given twice in one object; keep one of them",
        f"{candidates}:4: source.collection: given twice in one object; keep one of them",
    ]
    assert stored(workspace, Candidate) == 0
