"""`curate release reproduce`: the demo release re-derives from its folder alone, and a record changed after
the build — with every hash fixed up, so `verify` passes — is caught with its file and line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checker.reproduce import replay_verdicts
from curation.items import import_items
from curation.reviews import import_reviews
from curation.workspace import Workspace
from exports.build import build_release
from exports.reproduce import reproduce_release
from exports.verify import verify_release
from omnicurate.cli.main import app
from omnicurate.demo.judge import VERSION
from tests.conftest import DemoTemplates
from tests.curation.kinds import test_mcq_modalities as modalities_case
from tests.exports.admission_helpers import copy_release, edit_line, lines, template_release
from tests.exports.workspace_factory import fill_workspace, group_rows


@pytest.fixture
def demo_release(demo_templates: DemoTemplates) -> Path:
    return template_release(demo_templates, "mcq", "0.1.0")


@pytest.fixture
def release(demo_release: Path, tmp_path: Path) -> Path:
    """A copy to tamper with, outside any workspace."""
    return copy_release(demo_release, tmp_path / "release")


def _tampered(release: Path, rel: str, line: int, verify_ok: bool = True) -> list[str]:
    assert verify_release(release).ok is verify_ok, "the tamperer fixed up every hash"
    report = reproduce_release(release, replay_verdicts)
    assert not report.ok
    assert any(f"{rel}:{line}" in d for d in report.differences), report.differences
    return report.differences


def test_demo_release_reproduces_from_its_folder_alone(release: Path) -> None:
    report = reproduce_release(release, replay_verdicts)
    assert report.ok, report.differences
    assert report.units == len(lines(release, "admission/units.jsonl")) >= 2
    assert report.records == len(lines(release, "admission/records.jsonl")) > 0
    outcomes = {o["id"]: o for o in lines(release, "admission/outcomes.jsonl")}
    released = {i["id"] for i in lines(release, "data/items.jsonl")}
    assert {i for i, o in outcomes.items() if o["state"] == "admitted"} >= released


def test_cli_reproduce_exit_codes(release: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["release", "reproduce", str(release), "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["ok"] is True
    edit_line(
        release,
        "admission/records.jsonl",
        lambda r: r["stage"] == "answer_check",
        lambda r: r["payload"].update(answer="D"),
    )
    bad = runner.invoke(app, ["release", "reproduce", str(release)])
    assert bad.exit_code == 1
    assert "admission/records.jsonl:" in bad.stdout


def test_a_changed_checklist_is_caught(release: Path) -> None:
    def drop_label(record: dict[str, Any]) -> None:
        full = record["payload"]["consistent"]
        full["text+image+audio"] = ["B"] if full["text+image+audio"] != ["B"] else ["C"]

    line = edit_line(release, "admission/records.jsonl", lambda r: r["stage"] == "subset_checklist", drop_label)
    differences = _tampered(release, "admission/records.jsonl", line)
    assert any("stage subset_checklist" in d for d in differences)


def test_a_changed_blind_answer_is_caught(release: Path) -> None:
    line = edit_line(
        release,
        "admission/records.jsonl",
        lambda r: r["stage"] == "answer_check",
        lambda r: r["payload"].update(answer="D" if r["payload"]["answer"] != "D" else "A"),
    )
    differences = _tampered(release, "admission/records.jsonl", line)
    assert any("stage answer_check" in d for d in differences)
    assert any(d.startswith("stats.json: agreement.answer_check") for d in differences), "kappa moves too"


def test_a_changed_probe_output_is_caught(release: Path) -> None:
    released = lines(release, "data/items.jsonl")[0]
    wrong = next(o for o in "ABCD" if o != released["answer"])

    def flip(record: dict[str, Any]) -> None:
        record.pop("samples", None)
        record["probs"] = {o: (0.97 if o == wrong else 0.01) for o in "ABCD"}

    line = edit_line(
        release,
        "admission/probes.jsonl",
        lambda p: p["item"] == released["id"] and p["view"] == "text+image+audio",
        flip,
    )
    differences = _tampered(release, "admission/probes.jsonl", line)
    assert any("probe verdict" in d and released["id"] in d for d in differences)


def test_a_changed_exposure_is_caught(release: Path) -> None:
    checker = next(r["reviewer"] for r in lines(release, "admission/records.jsonl") if r["stage"] == "answer_check")

    def expose(e: dict[str, Any]) -> None:
        e.update(person=checker, via="exposed:shown", at="2000-01-01T00:00:00")

    line = edit_line(release, "admission/exposures.jsonl", lambda e: True, expose)
    # verify checks the blind statements against the released exposures: this one is now contradicted
    found = verify_release(release).mismatches
    assert [m.path for m in found] == ["admission/attestations.jsonl:1"]
    assert "knew the label before answering (exposed:shown)" in found[0].detail
    differences = _tampered(release, "admission/exposures.jsonl", line, verify_ok=False)
    assert any(d.startswith("admission/attestations.jsonl:1:") for d in differences)


def test_a_changed_shipped_answer_is_caught(release: Path) -> None:
    line = edit_line(release, "data/items.jsonl", lambda i: True, lambda i: i.update(answer="D"))
    report = reproduce_release(release, replay_verdicts)
    assert any(d.startswith(f"data/items.jsonl:{line}:") and "answer" in d for d in report.differences)


def test_a_release_without_record_is_a_clear_error(release: Path) -> None:
    (release / "admission" / "settings.json").unlink()
    runner = CliRunner()
    result = runner.invoke(app, ["release", "reproduce", str(release)])
    assert result.exit_code == 2
    assert "admission record" in result.output


def test_a_damaged_line_names_file_and_line(release: Path) -> None:
    path = release / "admission" / "records.jsonl"
    text = path.read_text(encoding="utf-8").split("\n")
    text[2] = "{not json"
    path.write_text("\n".join(text), encoding="utf-8")
    result = CliRunner().invoke(app, ["release", "reproduce", str(release)])
    assert result.exit_code == 2
    assert "admission/records.jsonl:3" in result.output


def test_a_release_of_chinese_and_english_items_reproduces(
    make_workspace: Callable[[str], Workspace], tmp_path: Path
) -> None:
    ws = make_workspace("ws")
    chinese = group_rows("g2", options=3, language="zh")
    for row in chinese:
        row["context"] = "小明把钥匙落在了厨房的桌子上，他说话的语气听起来很平静。"
        row["options"] = {"A": "感激", "B": "讽刺", "C": "矛盾"}
    fill_workspace(ws, tmp_path / "input", group_rows("g1") + chinese)
    result = build_release(ws, "1.0.0", out=tmp_path / "release")
    report = reproduce_release(result.path, replay_verdicts)
    assert report.ok, report.differences
    units = lines(result.path, "admission/units.jsonl")
    assert report.units == len(units) == 4
    assert any(ord(ch) > 0x4E00 for u in units if u["group"] == "g2" for ch in u["context"])
    line = edit_line(
        result.path,
        "admission/records.jsonl",
        lambda r: r["stage"] == "grammar" and r["subject"].startswith("item:g2"),
        lambda r: r["payload"].update(verdict="fail"),
    )
    differences = _tampered(result.path, "admission/records.jsonl", line)
    assert any("stage grammar" in d for d in differences)


def test_a_release_of_text_image_items_reproduces(make_workspace: Callable[[str], Workspace], tmp_path: Path) -> None:
    ws = make_workspace("ws")
    import_items(ws, modalities_case.setup(ws, tmp_path / "in"))
    import_reviews(ws, modalities_case.write(tmp_path / "r.jsonl", modalities_case.reviews({"ti-a": "A", "ti-b": "B"})))
    result = build_release(ws, "1.0.0", out=tmp_path / "release")
    report = reproduce_release(result.path, replay_verdicts)
    assert report.ok, report.differences
    outcome = lines(result.path, "admission/outcomes.jsonl")[0]
    assert "audio_signoff" not in outcome["stages"] and outcome["state"] == "admitted"
    assert not (result.path / "admission" / "probes.jsonl").read_text(encoding="utf-8")
    # a release without audio declares no audio column, and every record set loads where users load it
    import mlcroissant as mlc

    croissant = json.loads((result.path / "croissant.json").read_text(encoding="utf-8"))
    items = next(rs for rs in croissant["recordSet"] if rs["@id"] == "items")
    assert not [f["name"] for f in items["field"] if "audio" in f["name"]]
    dataset = mlc.Dataset(jsonld=result.path / "croissant.json")
    loaded = {rs.uuid: sum(1 for _ in dataset.records(record_set=rs.uuid)) for rs in dataset.metadata.record_sets}
    assert loaded["items"] == 2


def test_the_story_demo_release_reproduces_and_a_changed_filter_decision_is_caught(
    tmp_path: Path, demo_templates: DemoTemplates
) -> None:
    release = copy_release(template_release(demo_templates, "story", "0.1.0"), tmp_path / "release")
    report = reproduce_release(release, replay_verdicts)
    assert report.ok, report.differences
    shipped = {t["id"] for t in lines(release, "data/transitions.jsonl")}
    assert {u["id"] for u in lines(release, "admission/units.jsonl") if u["released"]} == shipped
    rejected = {r["id"]: r for r in lines(release, "admission/rejected.jsonl")}
    assert any("filter:drop" in r["reasons"] for r in rejected.values())
    assert "### Admission record" in (release / "README.md").read_text(encoding="utf-8")
    line = edit_line(
        release,
        "admission/records.jsonl",
        lambda r: r["stage"] == "filter" and r["subject"].removeprefix("item:") in shipped,
        lambda r: r["payload"].update(verdict="drop"),
    )
    differences = _tampered(release, "admission/records.jsonl", line)
    assert any("stage filter" in d for d in differences)


def test_a_malformed_probe_line_is_bad_input_naming_its_line(release: Path) -> None:
    line = edit_line(release, "admission/probes.jsonl", lambda p: True, lambda p: p.update(view="smell"))
    result = CliRunner().invoke(app, ["release", "reproduce", str(release)])
    assert result.exit_code == 2
    assert f"probes.jsonl:{line}" in result.output and 'unknown view "smell"' in result.output


def test_the_judge_demo_release_reproduces_and_a_changed_crosscheck_is_caught(
    tmp_path: Path, demo_templates: DemoTemplates
) -> None:
    release = copy_release(template_release(demo_templates, "judge", VERSION), tmp_path / "release")
    report = reproduce_release(release, replay_verdicts)
    assert report.ok, report.differences
    tasks = lines(release, "admission/tasks.jsonl")
    assert report.units == len(tasks) > 0 and all(t["released"] for t in tasks)
    assert all(r["reviewer"].startswith("p-") for t in tasks for r in t["records"])
    assert "### Admission record" in (release / "README.md").read_text(encoding="utf-8")

    def drop_one(task: dict[str, Any]) -> None:
        check = next(r for r in task["records"] if r["stage"] == "checklist_crosscheck")
        check["payload"]["selected"] = check["payload"]["selected"][1:]

    line = edit_line(
        release,
        "admission/tasks.jsonl",
        lambda t: any(r["stage"] == "checklist_crosscheck" for r in t["records"]),
        drop_one,
    )
    differences = _tampered(release, "admission/tasks.jsonl", line)
    assert any(d.startswith("agreement.json: checklist_selection") for d in differences)
