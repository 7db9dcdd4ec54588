"""The judge pages through AppTest under a team: a save names what its page showed, so another person's change
between the page's render and the click is refused (``stale:<stage>``), said in the page's words (neutral sample
and response names, never the ids that name systems), with the person's input kept and nothing recorded, and
the next click records; score and pair choices are kept as drafts the moment they are made and come back in a
new session (a reload), on the sample the person was at."""

from __future__ import annotations

import pytest
from judge_helpers import build_judge_template, copy_workspace
from sqlalchemy import select
from test_judge_pages import click, criterion_radio, fill, open_page

from annotation_ui.components import label_text
from curation.drafts import load_draft
from curation.kinds.judge import annotation_store, draft_store, record_store, sample_store, task_store
from curation.kinds.judge.checklists import first_per_rubric
from curation.kinds.judge.rubrics import CRITERIA
from curation.kinds.judge.schema import ChecklistSelectionRecord, EntryEdit, entry_id
from curation.kinds.judge.tables import JudgeRecord, JudgeResponse

STALE_TAIL = "The page now shows the new content and keeps your input: check it and submit again."


@pytest.fixture(scope="module")
def judge_template(tmp_path_factory):
    return build_judge_template(tmp_path_factory.mktemp("judge-seen-template"), tasks=("t2t-01", "t2i-01"))


@pytest.fixture
def judge_ws(judge_template, tmp_path, monkeypatch):
    ws = copy_workspace(judge_template, tmp_path / "ws")
    monkeypatch.setenv("CURATE_WORKSPACE", str(ws.root))
    yield ws
    ws.close()


def drop_records(ws, stage_prefix: str) -> None:  # type: ignore[no-untyped-def]
    with ws.writing() as s:
        for row in s.execute(select(JudgeRecord).where(JudgeRecord.stage.startswith(stage_prefix))).scalars():
            s.delete(row)


def sample_ids(ws) -> set[str]:  # type: ignore[no-untyped-def]
    return {s.id for kind in ("score", "pair") for s in sample_store.samples(ws, kind)}


def test_apply_after_the_checklist_changed_is_refused_and_the_choices_stay(judge_ws):
    at = open_page("judge_score", "ann1")
    sample = at.session_state["judge-score-current"]
    task = sample_store.sample_row(judge_ws, sample).task
    full = dict.fromkeys(CRITERIA, 4)
    fill(at, "score", full)
    at.run()
    # ann3 re-curates the sample's task (another choice) while ann1 has it on screen
    other = first_per_rubric(list(reversed(draft_store.drafted_candidates(judge_ws, task))))
    record_store.record_selection(
        judge_ws, ChecklistSelectionRecord(task=task, stage="checklist_curation", reviewer="ann3", selected=other)
    )
    click(at, "Apply")
    [said] = [w.value for w in at.warning if w.value.startswith("Not recorded")]
    assert said == (
        "Not recorded: stale:score_annotation: Sample 1 changed since you saw it; nothing was saved: look at it "
        f"again. {STALE_TAIL}"
    )
    assert not [i for i in sample_ids(judge_ws) if i in said], "the message names no sample id (ids name systems)"
    assert any(w.value.startswith("This sample changed since you opened it") for w in at.warning)
    assert annotation_store.annotation(judge_ws, sample, "ann1") is None
    assert at.session_state["judge-score-current"] == sample, "nothing moved on by itself"
    assert {c: criterion_radio(at, "score", c).value for c in CRITERIA} == full, "the choices stay on screen"
    click(at, "Apply")  # now made on what the page shows
    assert annotation_store.annotation(judge_ws, sample, "ann1").applied
    assert at.success[0].value == "Applied Sample 1."


def test_choices_are_drafts_that_a_new_session_restores_where_the_person_was(judge_ws):
    at = open_page("judge_score", "ann2")
    first = at.session_state["judge-score-current"]
    fill(at, "score", {"overall": 5})
    click(at, "Next")
    second = at.session_state["judge-score-current"]
    fill(at, "score", {"clarity": 1, "coherence": 2})
    at.run()
    assert load_draft(judge_ws, "ann2", "judge_score", second) == {"clarity": 1, "coherence": 2}
    again = open_page("judge_score", "ann2")  # a reload: a new session, nothing on screen survives
    assert again.session_state["judge-score-current"] == second, "back on the sample of the newest draft"
    assert again.info[0].value == "Your unsaved draft of Sample 2 was restored."
    assert (
        criterion_radio(again, "score", "clarity").value == 1
        and criterion_radio(again, "score", "overall").value is None
    )
    click(again, "Previous")
    assert criterion_radio(again, "score", "overall").value == 5
    fill(again, "score", dict.fromkeys(CRITERIA, 3))
    click(again, "Apply")
    assert annotation_store.annotation(judge_ws, first, "ann2").payload["scores"] == dict.fromkeys(CRITERIA, 3)
    assert load_draft(judge_ws, "ann2", "judge_score", first) is None, "applied: the draft is gone"
    assert load_draft(judge_ws, "ann2", "judge_score", second) is not None, "the other sample's draft stays"
    # the pair page keeps its own drafts
    pair = open_page("judge_pair", "ann2")
    fill(pair, "pair", {"overall": "tie"})
    pair.run()
    reloaded = open_page("judge_pair", "ann2")
    assert criterion_radio(reloaded, "pair", "overall").value == "tie"
    assert reloaded.info[0].value.startswith("Your unsaved draft of Sample 1")


def test_curation_after_another_draft_is_refused_and_the_ticks_stay(judge_ws):
    drop_records(judge_ws, "checklist_")
    at = open_page("judge_checklist", "ann1")
    task = at.radio(key="judge-checklist_curation-pick").value
    prefix = f"judge-cl-checklist_curation-{task}-"
    for box in [c for c in at.checkbox if c.key.startswith(prefix)]:
        box.check()
    at.run()
    # a second model drafts one more entry (in Chinese) while ann1 is curating
    text = "图中是否只有一个绿色正方形？"
    entry = {"id": entry_id(task, "relevance", text), "rubric": "relevance", "text": text,
             "provenance": {"by": "model", "model": "other", "prompt_sha256": "2" * 64}}  # fmt: skip
    draft_store.store_draft(judge_ws, task, "second-model", "other", "2" * 64, {"entries": [entry]})
    click(at, "Submit")
    [said] = [w.value for w in at.warning if w.value.startswith("Not recorded")]
    assert said.startswith(f"Not recorded: stale:checklist_curation: the checklist candidates of task {task} changed")
    assert record_store.task_checklist(judge_ws, task).state == "drafted", "nothing recorded"
    boxes = {c.key: c.value for c in at.checkbox if c.key.startswith(prefix)}
    assert len(boxes) == 19 and sum(boxes.values()) == 18, "the new entry is shown, the ticks stay"
    assert boxes[prefix + entry["id"]] is False
    click(at, "Submit")
    curated = record_store.task_checklist(judge_ws, task)
    assert curated.state == "curated" and len(curated.curation.checklist) == 18


def test_crosscheck_after_a_rewrite_is_refused_and_the_ticks_stay(judge_ws):
    drop_records(judge_ws, "checklist_crosscheck")
    task = "t2t-01"
    at = open_page("judge_checklist", "ann2")
    at.radio[0].set_value("checklist_crosscheck").run()
    at.radio(key="judge-checklist_crosscheck-pick").set_value(task).run()
    prefix = f"judge-cl-checklist_crosscheck-{task}-"
    for box in [c for c in at.checkbox if c.key.startswith(prefix)]:
        box.check()
    at.run()
    # the curator rewrites one entry of their curation meanwhile
    curation = record_store.task_checklist(judge_ws, task).curation
    chosen = [e.id for e in curation.checklist]
    rewrite = EntryEdit(entry=chosen[0], text="Is exactly one green square drawn?")
    record_store.record_selection(
        judge_ws,
        ChecklistSelectionRecord(
            task=task, stage="checklist_curation", reviewer="ann3", selected=chosen, edits=[rewrite]
        ),
    )
    click(at, "Submit")
    assert any(w.value.startswith("Not recorded: stale:checklist_crosscheck") for w in at.warning)
    assert record_store.task_checklist(judge_ws, task).crosscheck is None
    labels = {c.label: c.value for c in at.checkbox if c.key.startswith(prefix)}
    assert labels[label_text("Is exactly one green square drawn?")] is False and sum(labels.values()) == len(labels) - 1
    click(at, "Submit")
    assert record_store.task_checklist(judge_ws, task).crosscheck.reviewer == "ann2"


def test_response_review_of_a_replaced_response_is_refused_in_neutral_words(judge_ws):
    drop_records(judge_ws, "response_review")
    at = open_page("judge_responses", "ann1")
    picked = next(r.id for r in task_store.responses(judge_ws, "t2t-01"))  # a text response
    at.radio(key="judge-responses-pick").set_value(picked).run()
    at.radio[-1].set_value("usable")
    with judge_ws.writing() as s:  # the response was replaced in the store after the page showed it
        row = s.get(JudgeResponse, picked)
        row.text, row.content_hash = "A different answer.", "f" * 64
        s.add(row)
    click(at, "Submit")
    [said] = [w.value for w in at.warning if w.value.startswith("Not recorded")]
    system = next(r.system for r in task_store.responses(judge_ws) if r.id == picked)
    assert "stale:response_review: Task " in said and picked not in said and system not in said
    assert record_store.response_reviews(judge_ws) == {}
    assert at.radio[-1].value == "usable", "the choice stays"
    assert "A different answer." in [t.value for t in at.text], "the new content is on screen"
    click(at, "Submit")
    assert [r.reviewer for r in record_store.response_reviews(judge_ws)[picked]] == ["ann1"]
