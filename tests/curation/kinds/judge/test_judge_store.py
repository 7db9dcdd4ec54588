"""The judge_task kind in a workspace (SQLite and PostgreSQL): imports with media (video included),
drafting through the replay backend and its cache, checklist stages, response review, samples, serving
to the configured number of annotators, annotations and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from checker.drafting import ReplayDrafter, draft_checklists
from curation.errors import NotFoundError, PermissionDenied, ValidationFailed
from curation.kinds.judge import (
    annotation_store,
    draft_store,
    output_store,
    record_store,
    sample_store,
    status,
    task_store,
    video_audit,
)
from curation.kinds.judge.checklists import first_per_rubric
from curation.kinds.judge.report import ReportSettings
from curation.kinds.judge.rubrics import CRITERIA
from curation.kinds.judge.schema import (
    ChecklistAdjudicationRecord,
    ChecklistSelectionRecord,
    ModelProvenance,
    ResponseReviewRecord,
)
from curation.kinds.judge.tables import JudgeDraft
from curation.tables import Asset
from omnicurate.demo.judge_sources import write_sources

PEOPLE = {
    "ann1": ["reviewer"],
    "ann2": ["reviewer"],
    "ann3": ["reviewer"],
    "maya": ["maintainer", "reviewer"],
    "bob": ["author"],
}


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


def curate_all(ws, sources, disagree: set[str] = frozenset()) -> None:
    draft_checklists(ws, ReplayDrafter(str(sources["drafts"])))
    for task in task_store.tasks(ws):
        candidates = draft_store.drafted_candidates(ws, task.id)
        ids = first_per_rubric(candidates)  # one entry of each of the six rubrics
        record_store.record_selection(
            ws, ChecklistSelectionRecord(task=task.id, stage="checklist_curation", reviewer="ann1", selected=ids)
        )
        chosen = [candidates[1].id, *ids[1:]] if task.id in disagree else ids  # another relevance entry
        record_store.record_selection(
            ws, ChecklistSelectionRecord(task=task.id, stage="checklist_crosscheck", reviewer="ann2", selected=chosen)
        )


def review_all(ws, unusable: set[str] = frozenset()) -> None:
    for r in task_store.responses(ws):
        bad = r.id in unusable
        record_store.record_response_review(
            ws,
            ResponseReviewRecord(response=r.id, reviewer="ann3", usable=not bad, reason="blank output" if bad else ""),
        )


def test_tasks_and_responses_import_with_video_probed(judge_ws, sources):
    tasks = {t.id: t for t in task_store.tasks(judge_ws)}
    assert len(tasks) == 12 and tasks["v2t-01"].modality_pair == "text+video->text"
    with judge_ws.session() as s:
        video = s.get(Asset, tasks["v2t-01"].inputs["video"])
    assert video.kind == "video" and video.mime == "video/mp4" and video.width == 96 and video.duration_s > 0.5
    assert judge_ws.asset_path(video).is_file()
    assert len(task_store.responses(judge_ws)) == 36
    again = task_store.import_tasks(judge_ws, sources["tasks"])  # the same file again changes nothing
    assert again.as_dict() == {"added": 0, "unchanged": 12}


def test_bad_lines_are_all_named_and_nothing_is_imported(judge_ws, tmp_path):
    (tmp_path / "media").mkdir()
    (tmp_path / "media" / "clip.mp4").write_text("not a video")
    lines = [
        {"id": "x1", "instruction": "Hi", "output": "text", "source": "s", "license": "CC0-1.0", "inputs": {"video": "media/clip.mp4"}},
        {"id": "x2", "instruction": "Hi", "output": "smell", "source": "s", "license": "CC0-1.0"},
        {"id": "x3", "instruction": "Hi", "output": "text", "source": "s", "license": "CC0-1.0"},
    ]  # fmt: skip
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(ValidationFailed) as caught:
        task_store.import_tasks(judge_ws, path)
    text = str(caught.value)
    assert f"{path}:1: inputs.video: clip.mp4" in text and f"{path}:2: output" in text
    assert "x3" not in {t.id for t in task_store.tasks(judge_ws)}
    responses = tmp_path / "responses.jsonl"
    responses.write_text(json.dumps({"task": "t2i-01", "system": "s", "output": {"text": "a picture"}}) + "\n")
    with pytest.raises(ValidationFailed, match="the task asks for image, the response is text"):
        task_store.import_responses(judge_ws, responses)


def test_drafts_are_cached_and_keep_their_provenance(judge_ws, sources):
    drafter = ReplayDrafter(str(sources["drafts"]))
    first = draft_checklists(judge_ws, drafter)
    assert len(first.drafted) == 12 and first.cached == []
    assert draft_checklists(judge_ws, drafter).as_dict() == {
        "drafted": [],
        "cached": [t.id for t in task_store.tasks(judge_ws)],
    }
    entries = draft_store.drafted_candidates(judge_ws, "v2t-01")
    assert len(entries) == 18
    assert isinstance(entries[0].provenance, ModelProvenance) and entries[0].provenance.model.startswith(
        "gemini-1.5-pro@"
    )
    drafts = judge_ws.session().execute(select(JudgeDraft).where(JudgeDraft.task == "v2t-01")).scalar_one()
    assert drafts.output["captions"]["video"].startswith("Coloured tiles")  # captioned first
    assert (
        "audio"
        not in draft_store.cached_draft(
            judge_ws, task_store.task(judge_ws, "t2t-01").content_hash, drafter.model_id, drafts.prompt_sha256
        )["captions"]
    )


def test_checklist_stages_separation_agreement_and_adjudication(judge_ws, sources):
    curate_all(judge_ws, sources, disagree={"t2t-02"})
    states = {t.task: t.state for t in record_store.task_checklists(judge_ws)}
    assert states["t2t-02"] == "disagreement" and sum(s == "final" for s in states.values()) == 11
    ids = [e.id for e in draft_store.drafted_candidates(judge_ws, "t2t-01")]
    valid = first_per_rubric(draft_store.drafted_candidates(judge_ws, "t2t-01"))
    with pytest.raises(PermissionDenied, match="cross-checked"):
        record_store.record_selection(
            judge_ws,
            ChecklistSelectionRecord(task="t2t-01", stage="checklist_curation", reviewer="ann2", selected=ids[:2]),
        )
    with pytest.raises(ValidationFailed, match="ann1 already recorded"):
        record_store.record_selection(
            judge_ws,
            ChecklistSelectionRecord(task="t2t-01", stage="checklist_curation", reviewer="ann3", selected=valid),
        )
    with pytest.raises(ValidationFailed, match="coherence: 0 entries chosen; select 1 to 6 per rubric"):
        record_store.record_selection(
            judge_ws,
            ChecklistSelectionRecord(task="t2t-01", stage="checklist_curation", reviewer="ann1", selected=ids[:7]),
        )
    with pytest.raises(NotFoundError, match="unknown person"):
        record_store.record_selection(
            judge_ws,
            ChecklistSelectionRecord(task="t2t-01", stage="checklist_crosscheck", reviewer="zed", selected=valid),
        )
    chosen = first_per_rubric(draft_store.drafted_candidates(judge_ws, "t2t-02"), 2)
    with pytest.raises(PermissionDenied, match="not a maintainer"):
        record_store.record_adjudication(
            judge_ws, ChecklistAdjudicationRecord(task="t2t-02", adjudicator="ann3", selected=chosen, reason="r")
        )
    done = record_store.record_adjudication(
        judge_ws, ChecklistAdjudicationRecord(task="t2t-02", adjudicator="maya", selected=chosen, reason="sharper")
    )
    assert done.state == "final" and [e.id for e in done.final] == chosen and len(chosen) == 12


def test_samples_serving_annotations_and_report(judge_ws, sources):
    curate_all(judge_ws, sources)
    review_all(judge_ws, unusable={"t2t-01:sys-c"})
    assert "t2t-01:sys-c" not in {r.id for r in record_store.usable_responses(judge_ws)}
    added = sample_store.build_samples(judge_ws)
    assert added == {"score": 35, "pair": 23}  # t2t-01 keeps two systems: one pair
    assert sample_store.build_samples(judge_ws) == {"score": 0, "pair": 0}  # stable
    pairs = sample_store.samples(judge_ws, "pair")
    assert all(p.first_system != p.second_system for p in pairs)
    assert all("sys-c" not in (p.first_system, p.second_system) for p in pairs if p.task == "t2t-01")

    # served to three annotators (the paper's Table 2), never twice to one; a fourth is not served a full sample
    full = dict.fromkeys(CRITERIA, 4)
    first = sample_store.next_sample(judge_ws, "ann1", "score")
    assert first.position == 0
    annotation_store.save_annotation(judge_ws, first.id, "ann1", {"overall": 3}, apply=False)  # a draft: still served
    assert sample_store.next_sample(judge_ws, "ann1", "score").id == first.id
    with pytest.raises(ValidationFailed, match="no value for"):
        annotation_store.save_annotation(judge_ws, first.id, "ann1", {"overall": 3}, apply=True)
    annotation_store.save_annotation(judge_ws, first.id, "ann1", full, apply=True)
    assert sample_store.next_sample(judge_ws, "ann1", "score").position == 1
    assert sample_store.next_sample(judge_ws, "ann2", "score").id == first.id
    annotation_store.save_annotation(judge_ws, first.id, "ann2", full, apply=True)
    assert sample_store.next_sample(judge_ws, "ann3", "score").id == first.id
    annotation_store.save_annotation(judge_ws, first.id, "ann3", full, apply=True)
    assert sample_store.next_sample(judge_ws, "maya", "score").position == 1  # first has its three annotators
    with pytest.raises(ValidationFailed, match="already has its 3 annotators"):
        annotation_store.save_annotation(judge_ws, first.id, "maya", full, apply=True)
    annotation_store.save_annotation(
        judge_ws, first.id, "ann1", {**full, "overall": 5}, apply=True
    )  # a revision, not a fourth
    assert sample_store.sample_row(judge_ws, first.id).applied == 3
    assert sample_store.previous_sample(judge_ws, "ann1", "score", before=1).id == first.id
    assert sample_store.previous_sample(judge_ws, "maya", "score", before=1) is None
    assert annotation_store.progress(judge_ws, "ann1", "score") == {"samples": 35, "mine": 1, "complete": 1}

    # everyone else's annotations and the judges, then the report
    from omnicurate.demo.judge_sources import human_choices, human_scores, judge_outputs

    for kind, make in (("score", human_scores), ("pair", human_choices)):
        for sample in sample_store.samples(judge_ws, kind):
            for person in ("ann1", "ann2"):
                annotation_store.save_annotation(
                    judge_ws, sample.id, person, make(sample.model_dump(), person), apply=True
                )
    outputs = sources["tasks"].parent / "judges.jsonl"
    lines = judge_outputs([s.model_dump() for s in sample_store.samples(judge_ws, "score")], "score")
    lines += judge_outputs([s.model_dump() for s in sample_store.samples(judge_ws, "pair")], "pair")
    outputs.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert output_store.import_judge_outputs(judge_ws, outputs).added == len(lines)
    report = output_store.report(judge_ws, ReportSettings(bootstrap=50))
    scores = report["scores"]["metrics"]
    assert set(scores) == {"judge-gemini", "judge-gpt", "fusion"}
    assert scores["judge-gemini"]["all"]["overall"]["n"] == 35
    assert 0 < scores["judge-gemini"]["all"]["overall"]["pearson"]["value"] <= 1
    assert "text+video->text" in scores["fusion"]["by_modality_pair"]
    assert report["pairs"]["arena"]["elo"]["human"]["sys-a"] > report["pairs"]["arena"]["elo"]["human"]["sys-c"]


def test_nobody_annotates_samples_of_a_task_they_imported(workspace, sources, tmp_path):
    for name, roles in PEOPLE.items():
        workspace.add_person(name, roles)
    one = tmp_path / "one"
    one.mkdir()
    for name in ("tasks", "responses", "drafts"):
        keep = [x for x in sources[name].read_text().splitlines() if '"t2t-01"' in x]
        (one / f"{name}.jsonl").write_text("\n".join(keep) + "\n")
    task_store.import_tasks(workspace, one / "tasks.jsonl", actor="maya")
    task_store.import_responses(workspace, one / "responses.jsonl")
    curate_all(workspace, {**sources, "drafts": one / "drafts.jsonl"})
    review_all(workspace)
    sample_store.build_samples(workspace)
    sample = sample_store.samples(workspace, "score")[0]
    with pytest.raises(PermissionDenied, match="'maya' imported task t2t-01"):
        annotation_store.save_annotation(workspace, sample.id, "maya", dict.fromkeys(CRITERIA, 3), apply=True)
    assert sample_store.sample_row(workspace, sample.id).applied == 0
    annotation_store.save_annotation(workspace, sample.id, "ann1", dict.fromkeys(CRITERIA, 3), apply=True)
    assert sample_store.sample_row(workspace, sample.id).applied == 1


def test_task_status_follows_the_stages(judge_ws, sources):
    rows = {r["id"]: r for r in status.task_status(judge_ws)}
    assert rows["t2t-01"] == {
        "id": "t2t-01", "group": "t2t-01", "kind": "judge_task", "state": "in_review", "stage": "checklist_curation", "reasons": []
    }  # fmt: skip
    curate_all(judge_ws, sources, disagree={"t2t-02"})
    rows = {r["id"]: r for r in status.task_status(judge_ws)}
    assert (rows["t2t-02"]["state"], rows["t2t-02"]["reasons"]) == ("held", ["checklist:disagreement"])
    assert rows["t2t-01"]["stage"] == "response_review"
    review_all(judge_ws, unusable={f"t2i-01:{s}" for s in ("sys-a", "sys-b", "sys-c")})
    rows = {r["id"]: r for r in status.task_status(judge_ws)}
    assert rows["t2t-01"]["state"] == "admitted" and rows["t2i-01"]["reasons"] == ["responses:none_usable"]


def test_video_duplicate_audit_finds_a_reencoded_input_across_tasks(judge_ws, tmp_path):
    from omnicurate.demo.judge_sources import _video

    (tmp_path / "media").mkdir()
    _video(tmp_path / "media" / "copy.mp4", seed=1, size=(80, 48))  # v2t-01's input, smaller
    line = {"id": "v2t-99", "instruction": "Where does the bar go?", "inputs": {"video": "media/copy.mp4"},
            "output": "text", "source": "s", "license": "CC0-1.0"}  # fmt: skip
    (tmp_path / "tasks.jsonl").write_text(json.dumps(line) + "\n")
    task_store.import_tasks(judge_ws, tmp_path / "tasks.jsonl")
    found = video_audit.video_duplicates(judge_ws)
    assert found["videos"] == 7 and found["computed"] == 7
    assert [p["tasks"] for p in found["pairs"]] == [["v2t-01", "v2t-99"]]
    assert video_audit.video_duplicates(judge_ws)["computed"] == 0  # cached per video
