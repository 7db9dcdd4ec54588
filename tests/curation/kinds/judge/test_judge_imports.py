"""Issue 22, cases 2 and 6 for the judge kind, on SQLite and PostgreSQL: `judge import records` and
`judge import annotations` keep nothing when a line is refused; scores are strict whole numbers and unknown
fields are refused; an adjudication needs a cross-check in dispute; `judge import tasks` takes --by."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from checker.drafting import ReplayDrafter, draft_checklists
from curation.errors import ValidationFailed
from curation.kinds.judge import (
    annotation_store,
    draft_store,
    output_store,
    record_import,
    record_store,
    sample_store,
    task_store,
)
from curation.kinds.judge.checklists import first_per_rubric
from curation.kinds.judge.rubrics import CRITERIA
from curation.kinds.judge.schema import ChecklistAdjudicationRecord, ChecklistSelectionRecord
from curation.kinds.judge.tables import JudgeAnnotation, JudgeRecord, JudgeTask
from omnicurate.cli.main import app
from omnicurate.demo.judge_sources import write_sources
from tests.curation.kinds.judge.test_judge_store import PEOPLE, curate_all, review_all


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, Path]:
    return write_sources(tmp_path_factory.mktemp("judge-src"))


@pytest.fixture
def judge_ws(workspace, sources):
    for name, roles in PEOPLE.items():
        workspace.add_person(name, roles)
    task_store.import_tasks(workspace, sources["tasks"])
    task_store.import_responses(workspace, sources["responses"])
    return workspace


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _count(ws, table) -> int:  # type: ignore[no-untyped-def]
    with ws.session() as s:
        return s.execute(select(func.count()).select_from(table)).scalar_one()


def test_a_refused_record_keeps_nothing_of_the_file(judge_ws, sources, tmp_path):
    draft_checklists(judge_ws, ReplayDrafter(str(sources["drafts"])))
    lines = []
    for task in task_store.tasks(judge_ws)[:3]:
        ids = first_per_rubric(draft_store.drafted_candidates(judge_ws, task.id))
        lines.append({"task": task.id, "stage": "checklist_curation", "reviewer": "ann1", "selected": ids})
    first = task_store.tasks(judge_ws)[0].id
    ids = lines[0]["selected"]
    # the curator cross-checks their own task: refused, on the last line
    lines.append({"task": first, "stage": "checklist_crosscheck", "reviewer": "ann1", "selected": ids})
    path = _write(tmp_path / "records.jsonl", lines)
    before = _count(judge_ws, JudgeRecord)
    with pytest.raises(ValidationFailed) as exc:
        record_import.import_records(judge_ws, path)
    assert f"{path}:4: checklist_crosscheck:" in str(exc.value)
    assert _count(judge_ws, JudgeRecord) == before  # the three curations before it were not kept
    assert all(record_store.task_checklist(judge_ws, t.id).curation is None for t in task_store.tasks(judge_ws)[:3])
    record_import.import_records(judge_ws, _write(tmp_path / "ok.jsonl", lines[:3]))  # the good lines alone import
    assert _count(judge_ws, JudgeRecord) == before + 3


def _annotation_lines(ws) -> list[dict]:  # type: ignore[no-untyped-def]
    samples = sample_store.samples(ws, "score")[:2]
    return [
        {"sample": s.id, "annotator": person, "scores": dict.fromkeys(CRITERIA, 4)}
        for s in samples
        for person in ("ann1", "ann2", "ann3")
    ]


def test_a_refused_annotation_keeps_nothing_of_the_file(judge_ws, sources, tmp_path):
    curate_all(judge_ws, sources)
    review_all(judge_ws)
    sample_store.build_samples(judge_ws)
    lines = _annotation_lines(judge_ws)
    fourth = {"sample": lines[0]["sample"], "annotator": "maya", "scores": dict.fromkeys(CRITERIA, 2)}
    path = _write(tmp_path / "annotations.jsonl", [*lines, fourth])  # a fourth annotator: the quota is three
    with pytest.raises(ValidationFailed) as exc:
        annotation_store.import_annotations(judge_ws, path)
    assert f"{path}:7: sample:" in str(exc.value) and "already has its 3 annotators" in str(exc.value)
    assert _count(judge_ws, JudgeAnnotation) == 0
    assert all(sample_store.sample_row(judge_ws, s.id).applied == 0 for s in sample_store.samples(judge_ws, "score"))
    ok = _write(tmp_path / "ok.jsonl", lines)
    assert annotation_store.import_annotations(judge_ws, ok) == {"applied": 6, "unchanged": 0}
    assert annotation_store.import_annotations(judge_ws, ok) == {"applied": 0, "unchanged": 6}  # again: no change
    assert _count(judge_ws, JudgeAnnotation) == 6


@pytest.mark.parametrize(
    ("value", "extra"),
    [(True, {}), ("4", {}), (3.0, {}), (6, {}), (4, {"note": "unknown field"})],
)
def test_scores_are_strict_and_unknown_fields_refused(judge_ws, sources, tmp_path, value, extra):
    curate_all(judge_ws, sources)
    review_all(judge_ws)
    sample_store.build_samples(judge_ws)
    line = {**_annotation_lines(judge_ws)[0], **extra}
    line["scores"] = {**line["scores"], "overall": value}
    path = _write(tmp_path / "a.jsonl", [_annotation_lines(judge_ws)[1], line])
    with pytest.raises(ValidationFailed) as exc:
        annotation_store.import_annotations(judge_ws, path)
    field = "note" if extra else "scores.overall"
    assert f"{path}:2: {field}:" in str(exc.value)
    assert _count(judge_ws, JudgeAnnotation) == 0


def test_judge_output_scores_are_strict(judge_ws, sources, tmp_path):
    curate_all(judge_ws, sources)
    review_all(judge_ws)
    sample_store.build_samples(judge_ws)
    sample = sample_store.samples(judge_ws, "score")[0].id
    path = _write(tmp_path / "j.jsonl", [{"sample": sample, "judge": "j1", "scores": {"overall": [True, 4]}}])
    with pytest.raises(ValidationFailed, match=r"j.jsonl:1: scores.overall.0:"):
        output_store.import_judge_outputs(judge_ws, path)


def test_adjudication_needs_a_cross_check_in_dispute(judge_ws, sources):
    draft_checklists(judge_ws, ReplayDrafter(str(sources["drafts"])))
    task = task_store.tasks(judge_ws)[0].id
    ids = first_per_rubric(draft_store.drafted_candidates(judge_ws, task))
    record_store.record_selection(
        judge_ws, ChecklistSelectionRecord(task=task, stage="checklist_curation", reviewer="ann1", selected=ids)
    )
    adjudication = ChecklistAdjudicationRecord(task=task, adjudicator="maya", selected=ids, reason="settled")
    with pytest.raises(ValidationFailed, match="no cross-check yet"):
        record_store.record_adjudication(judge_ws, adjudication)  # the blind cross-check cannot be skipped
    record_store.record_selection(
        judge_ws, ChecklistSelectionRecord(task=task, stage="checklist_crosscheck", reviewer="ann2", selected=ids)
    )
    with pytest.raises(ValidationFailed, match="agree; nothing to adjudicate"):
        record_store.record_adjudication(judge_ws, adjudication)
    assert record_store.task_checklist(judge_ws, task).adjudication is None


def test_cli_task_import_takes_by_for_ownership(workspace, sources):
    for name, roles in PEOPLE.items():
        workspace.add_person(name, roles)
    runner = CliRunner()
    base = ["-w", str(workspace.root), "judge", "import", "tasks", str(sources["tasks"])]
    missing = runner.invoke(app, base)
    assert missing.exit_code == 2 and "--by" in missing.output
    unknown = runner.invoke(app, [*base, "--by", "nobody"])
    assert unknown.exit_code == 2 and "nobody" in unknown.output
    assert _count(workspace, JudgeTask) == 0
    done = runner.invoke(app, [*base, "--by", "maya"])
    assert done.exit_code == 0, done.output
    with workspace.session() as s:
        assert set(s.execute(select(JudgeTask.created_by)).scalars()) == {"maya"}


@pytest.mark.parametrize("usable", ["yes", 1, "true"])
def test_a_response_review_verdict_is_a_json_boolean(judge_ws, tmp_path, usable):
    response = task_store.responses(judge_ws)[0].id
    line = {"response": response, "stage": "response_review", "reviewer": "ann3", "usable": usable}
    path = _write(tmp_path / "r.jsonl", [line])
    with pytest.raises(ValidationFailed, match=r"r.jsonl:1: usable:"):
        record_import.import_records(judge_ws, path)
    assert _count(judge_ws, JudgeRecord) == 0


def test_contradicting_records_in_one_file_are_refused(judge_ws, tmp_path):
    response = task_store.responses(judge_ws)[0].id
    line = {"response": response, "stage": "response_review", "reviewer": "ann3", "usable": True}
    path = _write(tmp_path / "r.jsonl", [line, {**line, "usable": False, "reason": "blank"}])
    with pytest.raises(ValidationFailed, match=r"r.jsonl:2: reviewer: contradicts line 1"):
        record_import.import_records(judge_ws, path)
    assert _count(judge_ws, JudgeRecord) == 0


def test_imported_task_media_come_with_their_facts_and_signatures(judge_ws):
    """The judge imports measure what the media gate and the audit read, as the item import does."""
    from curation.audit.tables import MediaFact, MediaSignature
    from curation.tables import Asset

    with judge_ws.session() as s:
        measurable = {a.sha256 for a in s.execute(select(Asset)).scalars() if a.kind in ("image", "audio")}
        facts = set(s.execute(select(MediaFact.sha256)).scalars())
        signed = set(s.execute(select(MediaSignature.sha256)).scalars())
    assert measurable and facts == signed == measurable
