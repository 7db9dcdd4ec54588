"""A judge annotation names the sample content its annotator saw: one applied after that content changed (the
task's checklist re-curated) is refused as ``stale:score_annotation`` and nothing is saved."""

from __future__ import annotations

import pytest
from test_judge_store import PEOPLE, curate_all, review_all

from curation.errors import ValidationFailed
from curation.kinds.judge import annotation_store, draft_store, record_store, sample_store, task_store
from curation.kinds.judge.checklists import first_per_rubric
from curation.kinds.judge.rubrics import CRITERIA
from curation.kinds.judge.schema import ChecklistSelectionRecord, ResponseReviewRecord
from omnicurate.demo.judge_sources import write_sources


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    return write_sources(tmp_path_factory.mktemp("judge-src"))


@pytest.fixture
def judge_ws(workspace, sources):
    for name, roles in PEOPLE.items():
        workspace.add_person(name, roles)
    task_store.import_tasks(workspace, sources["tasks"])
    task_store.import_responses(workspace, sources["responses"])
    return workspace


def test_apply_on_changed_sample_content_is_stale(judge_ws, sources):
    curate_all(judge_ws, sources)
    review_all(judge_ws)
    sample_store.build_samples(judge_ws)
    sample = sample_store.next_sample(judge_ws, "ann3", "score")
    shown = sample_store.sample_seen(judge_ws, sample.id)
    assert sample_store.sample_seen(judge_ws, sample.id) == shown  # stable while nothing changes
    # one entry per rubric, taken from the end of each rubric's drafts: another checklist within the bounds
    ids = first_per_rubric(list(reversed(draft_store.drafted_candidates(judge_ws, sample.task))))
    record_store.record_selection(  # the curator changes the task's checklist while ann3 has the sample open
        judge_ws,
        ChecklistSelectionRecord(task=sample.task, stage="checklist_curation", reviewer="ann1", selected=ids),
    )
    full = dict.fromkeys(CRITERIA, 4)
    with pytest.raises(ValidationFailed) as caught:
        annotation_store.save_annotation(judge_ws, sample.id, "ann3", full, apply=True, seen=shown)
    assert caught.value.problems[0].message.startswith(f"stale:score_annotation: sample {sample.id} changed")
    assert annotation_store.annotation(judge_ws, sample.id, "ann3") is None
    assert sample_store.sample_row(judge_ws, sample.id).applied == 0
    now = sample_store.sample_seen(judge_ws, sample.id)
    assert now != shown
    annotation_store.save_annotation(judge_ws, sample.id, "ann3", full, apply=True, seen=now)
    assert sample_store.sample_row(judge_ws, sample.id).applied == 1


def test_response_review_names_the_response_it_saw(judge_ws):
    response = task_store.responses(judge_ws)[0]
    record = ResponseReviewRecord(response=response.id, reviewer="ann3", usable=True)
    with pytest.raises(ValidationFailed, match="stale:response_review"):
        record_store.record_response_review(judge_ws, record, seen="0" * 64)
    assert record_store.response_reviews(judge_ws) == {}
    record_store.record_response_review(judge_ws, record, seen=response.content_hash)
    assert list(record_store.response_reviews(judge_ws)) == [response.id]
