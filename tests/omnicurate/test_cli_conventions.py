"""One set of CLI conventions (design.md "CLI conventions"): output that fits pipes, exit codes, ids that can be
listed, and the path rule — a path on the command line is relative to the current folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omnicurate.cli.main import app
from tests.conftest import DemoTemplates

ROOT = Path(__file__).resolve().parents[2]
DEMO_DATA = ROOT / "omnicurate" / "demo" / "data"
runner = CliRunner()


def invoke(*args: str, env: dict[str, str] | None = None, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env=env, input=input, catch_exceptions=False)


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory, demo_templates: DemoTemplates) -> dict[str, Path]:
    """The three demos, copied once for this module (SQLite); tests only read them or add to them."""
    base = tmp_path_factory.mktemp("demos")
    built = {}
    for name in ("mcq", "judge", "story"):
        demo_templates.copy(name, base / name).close()
        built[name] = base / name
    return built


# ---- output that fits pipes ----------------------------------------------------------------------------------


def test_a_table_to_a_pipe_is_tsv_with_every_reason_whole(demos: dict[str, Path]) -> None:
    result = invoke("-w", str(demos["mcq"]), "status")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "item\tgroup\tstate\tstage\treasons"
    assert not any(ch in result.stdout for ch in "│┃━─┏")  # no box drawing
    rows = {line.split("\t")[0]: line.split("\t") for line in lines[1:]}
    assert all(len(row) == 5 for row in rows.values())  # every line a row: the counts went to stderr
    assert "group:multiple_perturbed" in rows["bank-01-a"][4]  # whole, not split at 80 columns
    assert rows["traffic-01-b"][4] == "checklist:disagreement,probe:underdetermined"  # reasons as a list
    assert result.stderr.strip().endswith("returned") and "[" not in result.stdout  # no colour markup left in


def test_json_to_a_closed_pipe_stops_quietly(demos: dict[str, Path]) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written (as `| head` after its lines)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "omnicurate", "-w", str(demos["mcq"]), "status", "--json"],
            stdout=write,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.stderr.decode() == "" and done.returncode == 0


def test_human_output_rounds_and_never_shows_a_python_repr(demos: dict[str, Path]) -> None:
    text = invoke("-w", str(demos["mcq"]), "agreement").stdout
    assert "undefined: every pairable rating is 4" in text
    assert "undefined (" not in text and "is undefined: every" not in text  # the reason is said once
    floats = [
        w for w in text.replace(",", " ").replace(";", " ").split() if w.count(".") == 1 and w[0] in "-0123456789"
    ]
    assert floats and all(len(w.split(".")[1].rstrip(")")) <= 3 for w in floats), floats
    document = json.loads(invoke("-w", str(demos["mcq"]), "agreement", "--json").stdout)
    naturalness = document["audio_signoff"]["naturalness"]["value"]
    assert len(repr(naturalness).split(".")[1]) > 3  # full precision in --json
    responses = str(demos["judge"] / "demo-sources/responses.jsonl")
    judge = invoke("-w", str(demos["judge"]), "judge", "import", "responses", responses)
    assert judge.stdout.strip() == "responses: 0 added, 36 unchanged" and "{" not in judge.stdout


def test_people_passwd_without_a_terminal_reads_one_line_of_stdin(demos: dict[str, Path]) -> None:
    from curation.workspace import Workspace

    result = invoke("-w", str(demos["mcq"]), "people", "passwd", "ann2", input="a-new-password\n")
    assert result.exit_code == 0, result.output
    assert "Aborted" not in result.output and "Repeat" not in result.output and "Password:" not in result.output
    ws = Workspace.open(demos["mcq"])
    try:
        assert ws.check_password("ann2", "a-new-password").name == "ann2"
    finally:
        ws.close()
    empty = invoke("-w", str(demos["mcq"]), "people", "passwd", "ann2", input="")
    assert empty.exit_code == 2 and "no password on standard input" in empty.stderr
    unknown = invoke("-w", str(demos["mcq"]), "people", "passwd", "nobody", input="a-new-password\n")
    assert unknown.exit_code == 2 and "no person named 'nobody'" in unknown.stderr


# ---- ids that can be listed --------------------------------------------------------------------------------


def test_checklist_entries_are_listed_and_an_unknown_one_names_the_listing(
    demos: dict[str, Path], tmp_path: Path
) -> None:
    ws = ["-w", str(demos["judge"])]
    listed = json.loads(invoke(*ws, "judge", "checklist", "show", "t2t-01", "--json").stdout)
    assert listed["task"] == "t2t-01" and listed["state"] == "final"
    ids = [e["id"] for e in listed["entries"]]
    assert len(ids) == len(set(ids)) > 4 and sum(e["final"] for e in listed["entries"]) >= 1
    assert {"id", "rubric", "text", "provenance", "curated", "final"} <= set(listed["entries"][0])
    table = invoke(*ws, "judge", "checklist", "show", "t2t-01").stdout
    assert table.splitlines()[0] == "id\trubric\tfrom\tcurated\tfinal\ttext" and ids[0] in table
    records = tmp_path / "records.jsonl"
    line = {"task": "t2v-01", "stage": "checklist_crosscheck", "reviewer": "rev1", "selected": ["relevance-1"]}
    records.write_text(json.dumps(line) + "\n", encoding="utf-8")
    refused = invoke(*ws, "judge", "import", "records", str(records))
    assert refused.exit_code == 2
    assert "unknown entry 'relevance-1' for task t2v-01; list them with `curate judge checklist show t2v-01`" in (
        " ".join(refused.stderr.split())
    )
    missing = invoke(*ws, "judge", "checklist", "show", "nope")
    assert missing.exit_code == 2 and "curate judge checklists" in missing.stderr


def test_judge_samples_json_lists_the_samples_with_their_ids(demos: dict[str, Path]) -> None:
    document = json.loads(invoke("-w", str(demos["judge"]), "judge", "samples", "--json").stdout)
    assert document["added"] == {"score": 0, "pair": 0}
    assert len(document["score"]) == 34 and len(document["pair"]) == 22
    assert all(s["id"] for s in document["score"] + document["pair"])


# ---- one path rule: the command line is read from the current folder ----------------------------------------


def test_release_paths_are_relative_to_the_current_folder_with_a_hint_for_a_workspace_one(
    demos: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(demos["mcq"].parent)
    env = {"CURATE_WORKSPACE": "mcq"}
    inside = invoke("release", "verify", "releases/0.1.0", env=env)
    assert inside.exit_code == 2
    assert "relative to the current folder" in inside.stderr and "did you mean mcq/releases/0.1.0" in inside.stderr
    assert invoke("release", "verify", "mcq/releases/0.1.0", env=env).exit_code == 0
    diff = invoke("release", "diff", "mcq/releases/0.1.0", "releases/0.1.0", env=env)
    assert diff.exit_code == 2 and "did you mean mcq/releases/0.1.0" in diff.stderr
    same = invoke("release", "diff", "mcq/releases/0.1.0", "mcq/releases/0.1.0", "--json", env=env)
    assert same.exit_code == 0 and json.loads(same.stdout)["added"] == []


def test_story_study_release_is_read_from_the_current_folder(
    demos: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(demos["story"])
    window = invoke("story", "study", "window", "--release", "releases/0.1.0", "--size", "3", "--json")
    assert window.exit_code == 0, window.output
    assert len(json.loads(window.stdout)["window"]) == 3
    monkeypatch.chdir(demos["story"].parent)
    elsewhere = invoke("-w", "story", "story", "study", "window", "--release", "releases/0.1.0", "--size", "3")
    assert elsewhere.exit_code == 2 and "did you mean story/releases/0.1.0" in elsewhere.stderr


def test_screen_backend_replay_file_is_relative_to_the_current_folder(
    demos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(demos["story"] / "corpus" / "replay.jsonl", tmp_path / "outputs.jsonl")
    monkeypatch.chdir(tmp_path)
    ran = invoke("-w", str(demos["story"]), "screen", "--backend", "replay:outputs.jsonl", "--json")
    assert ran.exit_code == 0, ran.output
    # the same relative name from the workspace's point of view is not found from here
    refused = invoke("-w", str(demos["story"]), "screen", "--backend", "replay:corpus/replay.jsonl")
    assert refused.exit_code == 2 and "corpus/replay.jsonl" in refused.stderr


def test_check_probe_replay_file_is_relative_to_the_current_folder(
    demos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(DEMO_DATA / "probes.jsonl", tmp_path / "probes.jsonl")
    monkeypatch.chdir(tmp_path)
    ran = invoke("-w", str(demos["mcq"]), "check", "--probe", "replay:probes.jsonl", "--json")
    assert ran.exit_code == 0, ran.output
    assert len(json.loads(ran.stdout)["items"]) == 12


def test_export_items_into_a_folder_that_does_not_exist_creates_it(
    demos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("-w", str(demos["mcq"]), "export", "items", "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out").is_dir() and (tmp_path / "out" / "items.jsonl").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing beside it (no ./media)
    assert len((tmp_path / "out" / "items.jsonl").read_text(encoding="utf-8").splitlines()) == 12
    assert len(list((tmp_path / "out" / "media").iterdir())) > 0
    named = invoke("-w", str(demos["mcq"]), "export", "items", "file.jsonl")
    assert named.exit_code == 0 and (tmp_path / "file.jsonl").is_file()


# ---- exit codes and optional runtimes ----------------------------------------------------------------------


def test_a_missing_model_runtime_is_a_clean_error(
    demos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` fails as on a machine without it
    (tmp_path / "model").mkdir()
    result = invoke("-w", str(demos["mcq"]), "check", "--probe", f"transformers:{tmp_path / 'model'}")
    assert result.exit_code == 2
    assert "needs a package that is not installed (torch)" in result.stderr and "pip install torch" in result.stderr
    assert "Traceback" not in result.output


def test_doctor_reports_every_part_with_how_to_add_it() -> None:
    document = json.loads(invoke("doctor", "--json").stdout)
    names = {c["name"]: c for c in document["checks"]}
    assert {"media", "checker", "fpcalc", "ffmpeg", "replay:FILE", "transformers:PATH", "Label Studio"} <= set(names)
    assert names["replay:FILE"]["ok"] is True
    assert all(c["ok"] or c["how_to_add"] for c in document["checks"])
    assert names["fpcalc"]["ok"] == (shutil.which("fpcalc") is not None)
    bare = invoke("doctor", env={"PATH": "/nonexistent", "LABEL_STUDIO_URL": ""})
    assert bare.exit_code == 0
    row = next(line.split("\t") for line in bare.stdout.splitlines() if line.startswith("tool\tffmpeg"))
    assert row[2] == "no" and row[4] == "apt-get install ffmpeg"


def test_doctor_in_a_workspace_says_whether_its_copies_clone(tmp_path: Path) -> None:
    from exports.writer import copies_clone

    ws = tmp_path / "ws"
    assert invoke("init", str(ws)).exit_code == 0
    rows = [
        c for c in json.loads(invoke("-w", str(ws), "doctor", "--json").stdout)["checks"] if c["kind"] == "filesystem"
    ]
    assert [(c["name"], c["ok"]) for c in rows] == [("copy-on-write copies", copies_clone(ws))]
    assert rows[0]["detail"] == str(ws) and "XFS" in rows[0]["how_to_add"]
    elsewhere = json.loads(invoke("-w", str(tmp_path), "doctor", "--json").stdout)  # no workspace: nothing to say
    assert not [c for c in elsewhere["checks"] if c["kind"] == "filesystem"]


def test_ls_down_without_a_server_says_so(tmp_path: Path) -> None:
    result = invoke("ls", "down", "--home", str(tmp_path / "ls"))
    assert result.exit_code == 0 and "no local Label Studio runs from" in result.stdout


def test_a_tab_or_newline_inside_a_cell_is_escaped_in_tsv() -> None:
    from rich.console import Console
    from rich.table import Table

    from omnicurate.cli.common import table_as_tsv

    table = Table("a", "b", title="T")
    table.add_row("x\ty", "[red]two[/]\nlines")
    assert table_as_tsv(table, Console()) == "# T\na\tb\nx\\ty\ttwo\\nlines\n"


def test_report_values_read_as_people_read_them() -> None:
    from omnicurate.cli.common import for_people

    nested = {"outputs": {"pearson": 0.7803787543725623, "n": 12, "ci": [0.51, None]}, "elo": {}, "ok": True}
    assert for_people(nested) == "outputs (pearson 0.780, n 12, ci [0.510, —]), elo none, ok yes"
    assert "{" not in for_people({"2": 5}) and for_people({"2": 5}) == "2 5"


def test_imports_plots_and_replayed_drafts_read_paths_from_the_current_folder(
    demos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    shutil.copytree(DEMO_DATA, here)  # items.jsonl, reviews.jsonl and media/ beside them
    shutil.copy(demos["judge"] / "demo-sources" / "drafts.jsonl", here / "drafts.jsonl")
    assert invoke("init", str(tmp_path / "ws")).exit_code == 0
    monkeypatch.chdir(here)
    ws = ["-w", "../ws"]
    assert invoke(*ws, "people", "add", "ann1", "--role", "author").exit_code == 0
    assert invoke(*ws, "people", "add", "ann2", "--role", "author").exit_code == 0
    imported = invoke(*ws, "import", "items", "items.jsonl")
    assert imported.exit_code == 0, imported.output
    plots = invoke("-w", str(demos["mcq"]), "agreement", "--plots", "plots")
    assert plots.exit_code == 0 and any((here / "plots").glob("*.png"))
    assert not (demos["mcq"] / "plots").exists()
    drafted = invoke("-w", str(demos["judge"]), "judge", "draft", "--backend", "replay:drafts.jsonl", "--json")
    assert drafted.exit_code == 0, drafted.output
    assert json.loads(drafted.stdout)["drafted"] == []  # every task's draft is already cached
    missing = invoke(*ws, "import", "items", "nothere.jsonl")
    assert missing.exit_code == 2 and "nothere.jsonl" in missing.stderr
