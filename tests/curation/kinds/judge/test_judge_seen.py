"""Every judge save names what its page showed, and one made after that content changed is refused as
``stale:<stage>`` with nothing saved: an annotation (the task's checklist re-curated), a checklist curation
(another draft added entries), a cross-check (the curator rewrote an entry) and a response review."""

from __future__ import annotations

import pytest
from test_judge_store import PEOPLE, curate_all, review_all

from checker.drafting import ReplayDrafter, draft_checklists
from curation.errors import ValidationFailed
from curation.kinds.judge import annotation_store, draft_store, record_store, sample_store, task_store
from curation.kinds.judge.checklists import first_per_rubric
from curation.kinds.judge.rubrics import CRITERIA
from curation.kinds.judge.schema import ChecklistSelectionRecord, EntryEdit, ResponseReviewRecord, entry_id
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
    shown = record_store.response_seen(judge_ws, response.id)
    assert shown != response.content_hash, "the page shows the task too: the digest covers both"
    record = ResponseReviewRecord(response=response.id, reviewer="ann3", usable=True)
    with pytest.raises(ValidationFailed, match="stale:response_review: response .* changed since you saw it"):
        record_store.record_response_review(judge_ws, record, seen="0" * 64)
    assert record_store.response_reviews(judge_ws) == {}
    record_store.record_response_review(judge_ws, record, seen=shown)
    assert list(record_store.response_reviews(judge_ws)) == [response.id]


TASK = "t2t-01"


def curation(ids: list[str], reviewer: str = "ann1", **more) -> ChecklistSelectionRecord:  # type: ignore[no-untyped-def]
    return ChecklistSelectionRecord(task=TASK, stage="checklist_curation", reviewer=reviewer, selected=ids, **more)


def test_curation_on_changed_drafts_is_stale_and_records_nothing(judge_ws, sources):
    draft_checklists(judge_ws, ReplayDrafter(str(sources["drafts"])))
    shown = record_store.selection_seen(judge_ws, TASK, "checklist_curation")
    assert record_store.selection_seen(judge_ws, TASK, "checklist_curation") == shown  # stable while nothing changes
    ids = first_per_rubric(draft_store.drafted_candidates(judge_ws, TASK))
    events = len(judge_ws.events(f"judge_task:{TASK}"))
    # another model's draft adds an entry while ann1 has the task open (中文 entries are drafted too)
    text = "回答是否只画了一个绿色正方形？"
    extra = {"id": entry_id(TASK, "relevance", text), "rubric": "relevance", "text": text,
             "provenance": {"by": "model", "model": "other", "prompt_sha256": "1" * 64}}  # fmt: skip
    draft_store.store_draft(judge_ws, TASK, "other-input", "other", "1" * 64, {"entries": [extra]})
    with pytest.raises(ValidationFailed) as caught:
        record_store.record_selection(judge_ws, curation(ids), seen=shown)
    assert caught.value.problems[0].message == (
        f"stale:checklist_curation: the checklist candidates of task {TASK} changed since you saw it; "
        "nothing was saved: look at it again"
    )
    assert record_store.task_checklist(judge_ws, TASK).state == "drafted"
    assert len(judge_ws.events(f"judge_task:{TASK}")) == events, "no event either"
    now = record_store.selection_seen(judge_ws, TASK, "checklist_curation")
    assert now != shown
    assert record_store.record_selection(judge_ws, curation(ids), seen=now).state == "curated"
    assert record_store.record_selection(judge_ws, curation(ids)).state == "curated", "a records file names none"


def test_crosscheck_on_a_rewritten_candidate_is_stale_but_not_on_another_choice(judge_ws, sources):
    draft_checklists(judge_ws, ReplayDrafter(str(sources["drafts"])))
    drafted = draft_store.drafted_candidates(judge_ws, TASK)
    ids = first_per_rubric(drafted)
    record_store.record_selection(judge_ws, curation(ids))
    shown = record_store.selection_seen(judge_ws, TASK, "checklist_crosscheck")
    # the curator only chooses otherwise: the blind cross-checker saw the same candidates, nothing is stale
    record_store.record_selection(judge_ws, curation(first_per_rubric(drafted, 2)))
    assert record_store.selection_seen(judge_ws, TASK, "checklist_crosscheck") == shown
    # the curator rewrites an entry: the candidates the cross-checker saw changed
    record_store.record_selection(
        judge_ws, curation(ids, edits=[EntryEdit(entry=ids[0], text="Is there exactly one green square?")])
    )
    crosscheck = ChecklistSelectionRecord(task=TASK, stage="checklist_crosscheck", reviewer="ann2", selected=ids)
    with pytest.raises(ValidationFailed, match="^content: stale:checklist_crosscheck: the checklist candidates"):
        record_store.record_selection(judge_ws, crosscheck, seen=shown)
    assert record_store.task_checklist(judge_ws, TASK).crosscheck is None
    now = record_store.selection_seen(judge_ws, TASK, "checklist_crosscheck")
    offered = record_store.task_checklist(judge_ws, TASK).curation.candidates
    assert "Is there exactly one green square?" in {e.text for e in offered}
    fresh = crosscheck.model_copy(update={"selected": first_per_rubric(offered)})
    assert record_store.record_selection(judge_ws, fresh, seen=now).crosscheck.reviewer == "ann2"
