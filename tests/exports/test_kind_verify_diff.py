"""`curate release verify|diff` on releases of the other kinds: a judge_task release built by the demo, and a
story_transition release laid out by hand. Tampering that keeps the file list consistent (the manifest
re-hashed along with the edit) is still caught by the cross-references of the data files."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.errors import CurateError
from exports.release_parquet import records_parquet
from exports.story_release import PARQUET_COLUMNS
from exports.verify import diff_releases, verify_release
from omnicurate.cli.main import app
from tests.conftest import DemoTemplates

runner = CliRunner()


@pytest.fixture
def judge_release(demo_templates: DemoTemplates) -> Path:
    """The judge demo template's release, read only (tests that change a release take ``release``, a copy)."""
    template, _db = demo_templates["judge"]["sqlite"]
    return template / "releases" / "1.0.0"


@pytest.fixture
def release(judge_release: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(judge_release, tmp_path / "r"))


def rows(folder: Path, rel: str) -> list[dict]:
    return [json.loads(x) for x in (folder / rel).read_text().splitlines()]


def rewrite(folder: Path, rel: str, records: list[dict]) -> None:
    """Write a data file and re-hash it in the manifest, as a careful forger would."""
    data = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode()
    (folder / rel).write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] == rel:
            entry["sha256"], entry["size"] = hashlib.sha256(data).hexdigest(), len(data)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def found(folder: Path) -> set[tuple[str, str]]:
    return {(m.kind, m.path) for m in verify_release(folder).mismatches}


def test_a_judge_release_verifies_and_names_its_kind(release: Path) -> None:
    report = verify_release(release)
    assert report.ok, report.mismatches
    # 31 data (the tasks and responses in Parquet too), media and metadata files (claims.json too) + admission/ (2)
    assert (report.items, report.files) == (12, 33)
    result = runner.invoke(app, ["release", "verify", str(release)])
    assert result.exit_code == 0 and "12 items: OK" in result.output


def test_a_changed_task_and_a_removed_medium_are_found(release: Path) -> None:
    tasks = (release / "data" / "tasks.jsonl").read_text().replace("Write a haiku", "Write a limerick")
    (release / "data" / "tasks.jsonl").write_text(tasks)
    video = rows(release, "data/tasks.jsonl")[[t["id"] for t in rows(release, "data/tasks.jsonl")].index("v2t-01")]
    (release / video["inputs"]["video"]).unlink()
    assert found(release) == {
        ("changed", "data/tasks.jsonl"),
        ("invalid", "data/tasks.parquet"),  # it still holds the tasks as released
        ("missing", video["inputs"]["video"]),
    }
    result = runner.invoke(app, ["release", "verify", str(release)])
    assert result.exit_code == 1 and "changed: data/tasks.jsonl" in result.output


def test_a_data_file_of_the_kind_dropped_from_file_list_and_folder_is_named(release: Path) -> None:
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"] = [e for e in manifest["files"] if e["path"] != "data/judge_outputs.jsonl"]
    (release / "manifest.json").write_text(json.dumps(manifest))
    (release / "data" / "judge_outputs.jsonl").unlink()  # the folder and the list agree: only the kind knows
    assert ("missing", "data/judge_outputs.jsonl") in found(release)


def test_forged_annotations_and_counts_are_caught_by_the_cross_references(release: Path) -> None:
    annotations = rows(release, "data/score_annotations.jsonl")
    annotations[0]["sample"] = "s:t2t-01:sys-z"
    rewrite(release, "data/score_annotations.jsonl", annotations)
    responses = rows(release, "data/responses.jsonl")
    dropped = responses.pop(0)
    rewrite(release, "data/responses.jsonl", responses)
    mismatches = verify_release(release).mismatches
    details = {(m.kind, m.path, m.detail) for m in mismatches}
    assert (
        "broken_reference",
        "data/score_annotations.jsonl",
        "an annotation names sample s:t2t-01:sys-z, which is not in data/score_samples.jsonl",
    ) in details
    assert any(m.path == "data/score_samples.jsonl" and dropped["id"] in m.detail for m in mismatches)
    assert ("invalid", "manifest.json", "counts.responses is 34, the data has 33") in details
    assert {("invalid", "croissant.json")} <= {(m.kind, m.path) for m in mismatches}, "croissant's hashes too"


def test_judge_release_diff_lists_tasks_and_checklists(release: Path, judge_release: Path) -> None:
    tasks = [t for t in rows(release, "data/tasks.jsonl") if t["id"] != "t2v-01"]
    tasks[0]["instruction"] += " Answer in one word."
    rewrite(release, "data/tasks.jsonl", tasks)
    checklists = rows(release, "data/checklists.jsonl")
    checklists[1]["entries"] = checklists[1]["entries"][:1]
    rewrite(release, "data/checklists.jsonl", checklists)
    diff = diff_releases(judge_release, release)
    assert diff["removed"] == ["t2v-01"] and diff["added"] == []
    assert {c["id"]: sorted(c["fields"]) for c in diff["changed"]} == {
        tasks[0]["id"]: ["instruction"],
        checklists[1]["task"]: ["checklist"],
    }
    result = runner.invoke(app, ["release", "diff", str(judge_release), str(release), "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["unchanged"] == 12 - 1 - 2


def story_release(folder: Path, version: str = "0.1.0", text: str = "Kito walked home.") -> Path:
    """A story_transition release laid out as exports/story_release.py writes one (two transitions)."""
    (folder / "data").mkdir(parents=True)
    (folder / "media").mkdir()
    records, items = [], []
    for n in range(2):
        blobs = {}
        for side in ("current_image", "next_image"):
            data = f"{side}-{n}".encode()
            sha = hashlib.sha256(data).hexdigest()
            (folder / "media" / f"{sha}.jpg").write_bytes(data)
            blobs[side] = (f"media/{sha}.jpg", sha)
        records.append({"id": f"bk1-p0{n}", "current_text": text, **{k: v[0] for k, v in blobs.items()}})
        items.append(
            {"id": f"bk1-p0{n}", **{k: v[0] for k, v in blobs.items()}}
            | {f"{k}_sha256": v[1] for k, v in blobs.items()}
        )
    (folder / "data" / "transitions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "data" / "transitions.parquet").write_bytes(records_parquet(records, PARQUET_COLUMNS, "transitions"))
    files = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        files.append(
            {"path": path.relative_to(folder).as_posix(), "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        )
    manifest = {
        "format": "omnicurate-release/1",
        "kind": "story_transition",
        "version": version,
        "items": items,
        "files": files,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_a_story_release_checks_its_transitions_media(tmp_path: Path) -> None:
    folder = story_release(tmp_path / "s")
    report = verify_release(folder)
    assert report.ok and report.items == 2
    manifest = json.loads((folder / "manifest.json").read_text())
    gone = manifest["items"][1]["next_image"]
    manifest["files"] = [f for f in manifest["files"] if f["path"] != gone]
    manifest["items"][0]["current_image_sha256"] = "0" * 64
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / gone).unlink()
    details = {(m.kind, m.path, m.detail) for m in verify_release(folder).mismatches}
    assert ("broken_reference", "data/transitions.jsonl", f"item bk1-p01: next_image {gone} is missing") in details
    assert ("broken_reference", "manifest.json", f"item bk1-p01: next_image {gone} is not in its file list") in details
    assert any(d.startswith("item bk1-p00: current_image_sha256 0000") for _, _, d in details)


def test_story_diff_and_a_diff_across_kinds(tmp_path: Path, judge_release: Path) -> None:
    old, new = story_release(tmp_path / "a"), story_release(tmp_path / "b", "0.2.0", "Kito ran home.")
    diff = diff_releases(old, new)
    assert [c["fields"] for c in diff["changed"]] == [
        {"current_text": {"old": "Kito walked home.", "new": "Kito ran home."}}
    ] * 2
    with pytest.raises(CurateError, match="story_transition release .* judge_task release"):
        diff_releases(old, judge_release)


def test_the_judge_croissant_validates_and_yields_every_record_set(judge_release: Path) -> None:
    from tests.exports.test_interop import require

    mlc = require("mlcroissant")
    dataset = mlc.Dataset(jsonld=judge_release / "croissant.json")
    assert not dataset.metadata.issues.errors
    sets = {rs.name for rs in dataset.metadata.record_sets}
    assert sets == {
        "tasks", "checklists", "responses", "score_samples", "pair_samples",
        "score_annotations", "pair_annotations", "judge_outputs",
    }  # fmt: skip
    tasks = {r["tasks/id"].decode(): r for r in dataset.records("tasks")}
    assert len(tasks) == 12 and tasks["v2t-01"]["tasks/input_video"].decode().endswith(".mp4")
    assert tasks["t2t-01"]["tasks/input_video"] is None
    checklists = {r["checklists/task"].decode(): r for r in dataset.records("checklists")}
    shipped = {
        json.loads(x)["task"]: json.loads(x)["entries"]
        for x in (judge_release / "data/checklists.jsonl").read_text().splitlines()
    }
    assert [t.decode() for t in checklists["v2t-01"]["checklists/entry_text"]] == [e["text"] for e in shipped["v2t-01"]]
    scores = list(dataset.records("score_annotations"))
    first = rows(judge_release, "data/score_annotations.jsonl")[0]
    assert len(scores) == 34 * 3 and scores[0]["score_annotations/overall"] == first["scores"]["overall"]
    pairs = list(dataset.records("pair_samples"))
    assert {p["pair_samples/swapped"] for p in pairs} == {True, False}
    judged = list(dataset.records("judge_outputs"))
    outputs = rows(judge_release, "data/judge_outputs.jsonl")
    assert len(judged) == len(outputs) == 56 * 3  # two replayed judges and one run through `judge run`
    by_kind = {("score" if "scores" in o else "pair"): (o, j) for o, j in zip(outputs, judged, strict=True)}
    scored, chosen = by_kind["score"], by_kind["pair"]
    assert list(scored[1]["judge_outputs/score_overall"]) == scored[0]["scores"]["overall"]
    assert [c.decode() for c in chosen[1]["judge_outputs/choice_overall"]] == chosen[0]["choices"]["overall"]
