"""Issue 40, part 2: `curate release verify` and `curate release reproduce` on a damaged admission record.

The demo releases of each kind (mcq, story_transition, judge_task) have their ``admission/`` files damaged —
keys deleted, values of another type, lines truncated, duplicated or dropped, junk lines, a file removed —
with the manifest's hashes fixed up or not. Whatever the damage, each command succeeds or exits 1 (a finding)
or 2 (bad input) with a message that names the file; never a traceback. The named cases pin the message:
FILE:LINE: field: problem.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from omnicurate.cli.main import app
from tests.conftest import DemoTemplates
from tests.exports.admission_helpers import rehash
from tests.hostile_text import characters

KINDS = ("mcq", "story", "judge")
FILE_NAMED = re.compile(r"\b[a-z_]+(/[a-z_]+)?\.jsonl?\b")
JUNK_LINES = [
    "{}",
    "[]",
    "null",
    "1",
    '"text"',
    "{not json",
    '{"id": NaN}',
    '{"id": Infinity}',
    '{"id": 1e999}',
    '{"id": 123456789012345678901234567890}',
    "[" * 5000 + "]" * 5000,
    '{"a":' * 3000 + "1" + "}" * 3000,
    '{"id": "\\u0000"}',
    '{"id": "\\ud800"}',
    "\ufeff{}",
]
JUNK_BYTES = [b"\xff\xfe\x00", b"\x80abc", b"\xc3\x28", b'{"id": "\xed\xa0\x80"}']
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(characters, max_size=12),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.sampled_from(["", "x", "item:", "group:", "2020-13-45T99:00", "p-000000000000", "A", "Z"]),
)
"""What a key's value is replaced with: other types, out-of-range numbers, hostile and near-miss strings."""
mutations = st.one_of(
    st.tuples(st.just("delete_key"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(st.just("retype"), st.integers(0, 10**6), st.integers(0, 10**6), values),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(
        st.just("junk_line"), st.integers(0, 10**6), st.sampled_from(JUNK_LINES) | st.text(characters, max_size=30)
    ),
    st.tuples(st.just("junk_bytes"), st.integers(0, 10**6), st.sampled_from(JUNK_BYTES) | st.binary(max_size=20)),
    st.tuples(st.just("duplicate_line"), st.integers(0, 10**6)),
    st.tuples(st.just("delete_line"), st.integers(0, 10**6)),
    st.tuples(st.just("remove_file")),
)


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory, demo_templates: DemoTemplates) -> dict[str, tuple[Path, Path]]:
    """Per kind: (the demo's pristine release, a working copy to damage)."""
    from omnicurate.demo.judge import VERSION

    root = tmp_path_factory.mktemp("damaged")
    built = {
        "mcq": demo_templates.copy("mcq", root / "mcq").root / "releases" / "0.1.0",
        "story": demo_templates.copy("story", root / "story").root / "releases" / "0.1.0",
        "judge": demo_templates.copy("judge", root / "judge").root / "releases" / VERSION,
    }
    return {kind: (path, Path(shutil.copytree(path, root / f"work-{kind}"))) for kind, path in built.items()}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in a JSON value (the value itself excluded)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += _paths(inner, (*prefix, i))
    return found


def _set(value: Any, path: tuple[Any, ...], new: Any, delete: bool = False) -> None:
    for key in path[:-1]:
        value = value[key]
    if delete:
        del value[path[-1]]
    else:
        value[path[-1]] = new


def damage(folder: Path, rel: str, mutation: tuple[Any, ...]) -> None:
    """Apply one mutation to REL (a JSON Lines file, or settings.json as one line)."""
    path = folder / rel
    op = mutation[0]
    if op == "remove_file":
        path.unlink()
        return
    data = path.read_bytes()
    lines = data.split(b"\n") if rel.endswith(".jsonl") else [json.dumps(json.loads(data)).encode()]
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if op in ("junk_line", "junk_bytes"):
        junk = mutation[2] if isinstance(mutation[2], bytes) else mutation[2].encode("utf-8", "surrogatepass")
        lines.insert(mutation[1] % (len(lines) + 1), junk)
    elif filled:
        at = filled[mutation[1] % len(filled)]
        if op == "duplicate_line":
            lines.insert(at, lines[at])
        elif op == "delete_line":
            del lines[at]
        elif op == "truncate":
            lines[at] = lines[at][: mutation[2] % len(lines[at])]
        else:
            record = json.loads(lines[at])
            paths = _paths(record)
            if not paths:
                return
            target = paths[mutation[2] % len(paths)]
            _set(record, target, mutation[3] if op == "retype" else None, delete=op == "delete_key")
            lines[at] = json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass")
    path.write_bytes(b"\n".join(lines))


def _restore(pristine: Path, work: Path, rels: list[str]) -> None:
    for rel in rels:
        shutil.copyfile(pristine / rel, work / rel)


def run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def assert_named_or_fine(result: Result, command: str) -> None:
    """Exit 0, or 1 (a finding) or 2 (bad input) with a message naming a file; never a traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"release {command} raised {type(result.exception).__name__}: {result.exception}"
    )
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output and "Error(" not in result.output, result.output
    if result.exit_code:
        assert FILE_NAMED.search(result.output), result.output


def admission_files(release: Path) -> list[str]:
    return sorted(p.relative_to(release).as_posix() for p in (release / "admission").iterdir())


@pytest.mark.parametrize("kind", KINDS)
@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(file=st.integers(0, 100), mutation=mutations, fix_hashes=st.booleans())
@example(file=-1, mutation=("delete_key", 0, 0), fix_hashes=True)  # the judge release's case in the issue
def test_a_damaged_admission_record_is_named_never_a_traceback(
    releases: dict[str, tuple[Path, Path]], kind: str, file: int, mutation: tuple[Any, ...], fix_hashes: bool
) -> None:
    pristine, work = releases[kind]
    files = admission_files(pristine)
    rel = files[file % len(files)]
    try:
        damage(work, rel, mutation)
        if fix_hashes and (work / rel).exists():
            rehash(work, rel)  # as a careful forger would: `verify` then passes the file list
        for command in ("verify", "reproduce"):
            assert_named_or_fine(run("release", command, str(work)), command)
    finally:
        _restore(pristine, work, [rel, "manifest.json", "croissant.json"])


# ----- named cases: the message names file, line and field -------------------------------------------------
Edit = Callable[[dict[str, Any]], None]


def _edit(release: Path, rel: str, number: int, change: Edit) -> None:
    lines = (release / rel).read_text(encoding="utf-8").split("\n")
    record = json.loads(lines[number - 1])
    change(record)
    lines[number - 1] = json.dumps(record)
    (release / rel).write_text("\n".join(lines), encoding="utf-8")
    rehash(release, rel)


@pytest.fixture
def copy_of(releases: dict[str, tuple[Path, Path]], tmp_path: Path) -> Callable[[str], Path]:
    return lambda kind: Path(shutil.copytree(releases[kind][0], tmp_path / kind))


def test_a_judge_task_without_its_candidates_names_the_line(copy_of: Callable[[str], Path]) -> None:
    """The reported case: `KeyError: 'candidates'` from `release reproduce`."""
    release = copy_of("judge")
    _edit(release, "admission/tasks.jsonl", 2, lambda t: t.pop("candidates"))
    result = run("release", "reproduce", str(release))
    assert result.exit_code == 2, result.output
    assert "admission/tasks.jsonl:2: candidates: required field is missing" in result.output
    _edit(release, "admission/tasks.jsonl", 2, lambda t: t.update(candidates=[{"id": "x"}]))
    result = run("release", "reproduce", str(release))
    assert result.exit_code == 2 and "admission/tasks.jsonl:2: candidates.0.rubric" in result.output


def test_a_judge_record_payload_of_the_wrong_type_names_the_record(copy_of: Callable[[str], Path]) -> None:
    release = copy_of("judge")
    _edit(release, "admission/tasks.jsonl", 1, lambda t: t["records"][0]["payload"].update(selected="all"))
    result = run("release", "reproduce", str(release))
    assert result.exit_code == 2, result.output
    assert "admission/tasks.jsonl:1: records.0.payload.selected:" in result.output


def test_an_mcq_record_with_scores_of_the_wrong_type_names_its_line(copy_of: Callable[[str], Path]) -> None:
    release = copy_of("mcq")
    rows = (release / "admission/records.jsonl").read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(rows, 1) if json.loads(line)["stage"] == "audio_signoff")
    _edit(release, "admission/records.jsonl", number, lambda r: r["payload"].update(scores="loud"))
    result = run("release", "reproduce", str(release))
    assert result.exit_code == 2, result.output
    assert f"admission/records.jsonl:{number}: payload.scores:" in result.output


def test_every_damaged_admission_file_is_named_at_once(copy_of: Callable[[str], Path]) -> None:
    release = copy_of("mcq")
    rows = (release / "admission/records.jsonl").read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(rows, 1) if json.loads(line)["stage"] == "audio_signoff")
    _edit(release, "admission/records.jsonl", number, lambda r: r["payload"].update(scores="loud"))
    outcomes = release / "admission/outcomes.jsonl"
    outcomes.write_text(outcomes.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    last = len(outcomes.read_text(encoding="utf-8").splitlines())
    result = run("release", "reproduce", str(release))
    assert result.exit_code == 2, result.output
    assert f"admission/records.jsonl:{number}: payload.scores:" in result.output  # the first damaged file
    assert f"admission/outcomes.jsonl:{last}: invalid JSON" in result.output  # and a later one, in the same run


def test_a_story_unit_cut_short_and_a_unit_without_its_id(copy_of: Callable[[str], Path]) -> None:
    release = copy_of("story")
    units = release / "admission/units.jsonl"
    lines = units.read_text(encoding="utf-8").split("\n")
    lines[1] = lines[1][:40]
    units.write_text("\n".join(lines), encoding="utf-8")
    result = run("release", "reproduce", str(release))
    assert result.exit_code == 2 and "admission/units.jsonl:2: invalid JSON" in result.output, result.output
    lines[1] = lines[0]
    units.write_text("\n".join(lines), encoding="utf-8")
    result = run("release", "reproduce", str(release))
    assert result.exit_code == 2 and "admission/units.jsonl:2: id: id " in result.output, result.output
    _edit(release, "admission/units.jsonl", 2, lambda u: u.pop("id"))
    result = run("release", "reproduce", str(release))
    assert result.exit_code == 2 and "admission/units.jsonl:2: id: required field is missing" in result.output


def test_settings_of_the_wrong_type_name_the_setting(copy_of: Callable[[str], Path]) -> None:
    release = copy_of("story")
    path = release / "admission/settings.json"
    settings_ = json.loads(path.read_text(encoding="utf-8"))
    settings_["review"]["grammar_quorum"] = "2"
    path.write_text(json.dumps(settings_), encoding="utf-8")
    result = run("release", "reproduce", str(release))
    assert result.exit_code == 2, result.output
    assert "admission/settings.json: review.grammar_quorum: Input should be a valid integer" in result.output


def test_deeply_nested_junk_in_the_attestations(copy_of: Callable[[str], Path]) -> None:
    """`verify` reads the attestations too: the junk is a finding there (exit 1), bad input to `reproduce`."""
    release = copy_of("mcq")
    path = release / "admission/attestations.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    rehash(release, "admission/attestations.jsonl")
    verified = run("release", "verify", str(release))
    assert verified.exit_code == 1 and "admission/attestations.jsonl:3: invalid JSON: " in verified.output
    reproduced = run("release", "reproduce", str(release))
    assert reproduced.exit_code == 2 and "admission/attestations.jsonl:3: invalid JSON" in reproduced.output
