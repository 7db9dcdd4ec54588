"""The judge_task pages through AppTest: score and pair annotation (Apply, Previous, Next, drafts kept,
resume, served to three annotators and never twice to one), response review and checklist curation (1-6 per
rubric, 19 entries over six rubrics)."""

from __future__ import annotations

import pytest
from judge_helpers import build_judge_template, copy_workspace
from sqlalchemy import select
from streamlit.testing.v1 import AppTest
from ui_helpers import APP

from annotation_ui.components import USER_KEY, label_text
from annotation_ui.logic import SignedIn
from curation.drafts import load_draft
from curation.kinds.judge import annotation_store, draft_store, record_store, sample_store, task_store
from curation.kinds.judge.checklists import rubric_counts
from curation.kinds.judge.rubrics import CRITERIA, RUBRICS


@pytest.fixture(scope="session")
def judge_template(tmp_path_factory):
    return build_judge_template(tmp_path_factory.mktemp("judge-template"), tasks=("t2t-01", "v2t-01", "t2i-01"))


@pytest.fixture
def judge_ws(judge_template, tmp_path, monkeypatch):
    ws = copy_workspace(judge_template, tmp_path / "ws")
    monkeypatch.setenv("CURATE_WORKSPACE", str(ws.root))
    yield ws
    ws.close()


def open_page(page: str, name: str, roles=("reviewer",)) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[USER_KEY] = SignedIn(name, frozenset(roles))
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def criterion_radio(at: AppTest, kind: str, criterion: str):  # type: ignore[no-untyped-def]
    """The page's radio of CRITERION (keyed by the sample's number: sample ids name systems)."""
    [radio] = [r for r in at.radio if r.key.startswith(f"judge-{kind}-") and r.key.endswith(f"-{criterion}")]
    return radio


def fill(at: AppTest, kind: str, values: dict[str, object]) -> None:
    for criterion, value in values.items():
        criterion_radio(at, kind, criterion).set_value(value)


def click(at: AppTest, label: str) -> AppTest:
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, at.exception
    return at


def test_score_page_apply_previous_next_and_resume(judge_ws):
    at = open_page("judge_score", "ann1")
    first = at.session_state["judge-score-current"]
    assert first == sample_store.samples(judge_ws, "score")[0].id
    shown = "\n".join(t.value for t in at.text)
    assert "Draw a green square on a white background." in shown and "[relevance]" in shown  # checklist beside
    assert len(at.radio) == len(CRITERIA) and all(r.value is None for r in at.radio)

    fill(at, "score", {"overall": 2, "clarity": 4})
    at.run()
    assert load_draft(judge_ws, "ann1", "judge_score", first) == {"overall": 2, "clarity": 4}  # kept at each choice
    click(at, "Next")  # nothing applied
    second = at.session_state["judge-score-current"]
    assert second != first and annotation_store.annotation(judge_ws, first, "ann1") is None
    click(at, "Previous")
    assert at.session_state["judge-score-current"] == first
    assert criterion_radio(at, "score", "overall").value == 2  # the draft is back
    assert at.info[0].value == "Your unsaved draft of Sample 1 was restored."

    click(at, "Apply")  # incomplete: refused, nothing applied, still here
    assert "no value for" in at.error[0].value and at.session_state["judge-score-current"] == first
    fill(at, "score", dict.fromkeys(CRITERIA, 3))
    click(at, "Apply")
    assert (
        annotation_store.annotation(judge_ws, first, "ann1").applied
        and at.session_state["judge-score-current"] == second
    )
    assert at.success[0].value == "Applied Sample 1."
    assert load_draft(judge_ws, "ann1", "judge_score", first) is None, "the draft is dropped once applied"

    # a fresh session (a reload) resumes after the last applied sample, never serving it again
    again = open_page("judge_score", "ann1")
    assert again.session_state["judge-score-current"] == second
    # a second and a third person are served the first sample; a fourth is not, once three have applied it
    for person in ("ann2", "ann3"):
        other = open_page("judge_score", person)
        assert other.session_state["judge-score-current"] == first
        fill(other, "score", dict.fromkeys(CRITERIA, 4))
        click(other, "Apply")
    fourth = open_page("judge_score", "maya")
    assert fourth.session_state["judge-score-current"] == second


def test_pair_page_records_choices_per_rubric(judge_ws):
    at = open_page("judge_pair", "ann2")
    sample = at.session_state["judge-pair-current"]
    assert {"First response", "Second response", "Checklist"} <= {h.value for h in at.subheader}
    assert criterion_radio(at, "pair", "overall").options == ["first", "second", "tie"]
    fill(at, "pair", {c: ("tie" if c == "creativity" else "first") for c in CRITERIA})
    click(at, "Apply")
    saved = annotation_store.annotation(judge_ws, sample, "ann2")
    assert saved.applied and saved.payload["choices"]["creativity"] == "tie"
    assert saved.payload["choices"]["overall"] == "first"


def test_everything_done_says_so(judge_ws):
    for sample in sample_store.samples(judge_ws, "pair"):
        for person in ("ann1", "ann3", "maya"):  # three annotators per sample
            annotation_store.save_annotation(judge_ws, sample.id, person, dict.fromkeys(CRITERIA, "tie"), apply=True)
    at = open_page("judge_pair", "ann2")
    assert "Nothing waits for you" in at.info[0].value


def test_response_review_page(judge_ws):
    from curation.kinds.judge.tables import JudgeRecord

    with judge_ws.writing() as s:  # start from unreviewed responses
        for row in s.execute(select(JudgeRecord).where(JudgeRecord.stage == "response_review")).scalars():
            s.delete(row)
    at = open_page("judge_responses", "ann1")
    picked = at.radio(key="judge-responses-pick").value
    at.radio[-1].set_value("unusable")
    click(at, "Submit")
    assert "needs a reason" in at.error[0].value
    at.text_input[0].input("blank output")
    click(at, "Submit")
    (review,) = record_store.response_reviews(judge_ws)[picked]
    assert (review.usable, review.reason, review.reviewer) == (False, "blank output", "ann1")


def test_checklist_curation_page_bounds_and_blind_crosscheck(judge_ws):
    from curation.kinds.judge.tables import JudgeRecord

    with judge_ws.writing() as s:  # start before curation
        for row in s.execute(select(JudgeRecord).where(JudgeRecord.stage.startswith("checklist_"))).scalars():
            s.delete(row)
    at = open_page("judge_checklist", "ann1")
    task = at.radio(key="judge-checklist_curation-pick").value
    assert "For each rubric, select 1 to 6 entries" in at.caption[0].value
    click(at, "Submit")
    assert "relevance: 0 entries chosen; select 1 to 6 per rubric" in at.error[0].value
    boxes = [c for c in at.checkbox if c.key.startswith(f"judge-cl-checklist_curation-{task}-")]
    assert len(boxes) == 18  # three drafted entries for each of the six rubrics
    for box in boxes[:2]:
        box.check()
    click(at, "Submit")
    said = at.error[0].value
    assert "trustworthiness: 0 entries chosen" in said and "relevance:" not in said, "refused per rubric"
    assert record_store.task_checklist(judge_ws, task).state == "drafted", "nothing recorded"
    assert "relevance: 2 of 3 selected" in [c.value for c in at.caption]
    for box in at.checkbox:
        if box.key.startswith(f"judge-cl-checklist_curation-{task}-"):
            box.check()
    at.run()
    entry = "-".join(boxes[1].key.rsplit("-", 2)[-2:])  # ids read like rele-0123456789
    rewrite = at.text_input(key=f"judge-cl-edit-{task}-{entry}")
    rewrite.input("Does the image show exactly one green square?")
    at.text_input(key=f"judge-cl-add-text-{task}").input("Is the output kind?")
    at.selectbox(key=f"judge-cl-add-rubric-{task}").select("trustworthiness")
    click(at, "Submit")
    curated = record_store.task_checklist(judge_ws, task)
    assert curated.state == "curated" and len(curated.curation.checklist) == 19  # the paper's ~19 per query
    assert rubric_counts(curated.curation.checklist) == {**dict.fromkeys(RUBRICS, 3), "trustworthiness": 4}
    edited = curated.curation.checklist[1]
    assert edited.text == "Does the image show exactly one green square?" and edited.provenance.person == "ann1"
    # the curator is not offered the cross-check; another person does it without seeing the selection
    assert task not in (open_page("judge_checklist", "ann1").radio(key="judge-checklist_curation-pick").options or [])
    other = open_page("judge_checklist", "ann2")
    other.radio[0].set_value("checklist_crosscheck").run()
    assert other.radio(key="judge-checklist_crosscheck-pick").value == task
    boxes = [c for c in other.checkbox if c.key.startswith(f"judge-cl-checklist_crosscheck-{task}-")]
    assert len(boxes) == 19 and not any(b.value for b in boxes)  # blind: nothing preselected
    for box in boxes:
        box.check()
    click(other, "Submit")
    final = record_store.task_checklist(judge_ws, task)
    assert final.state == "final" and len(final.final) == 19


def test_dashboard_counts_judge_tasks_at_their_own_stages(judge_ws):
    from annotation_ui.dashboard import dashboard_data, kinds_present
    from annotation_ui.snapshot import load_snapshot
    from curation.kinds import kinds_present as kinds_present_in

    snap = load_snapshot(judge_ws)
    assert sorted(st.id for st in snap.kind_statuses) == ["t2i-01", "t2t-01", "v2t-01"] and snap.statuses == []
    assert kinds_present(snap) == ["judge_task"] == kinds_present_in(judge_ws)
    data = dashboard_data(snap, "judge_task")
    assert (data.total, data.states["admitted"]) == (3, 3)
    assert data.reached["checklist_curation"] == data.reached["response_review"] == 3
    assert list(data.stages) == ["checklist_curation", "checklist_crosscheck", "response_review"]
    assert dashboard_data(snap, "mcq").total == 0, "a judge task is counted under its own kind only"
    at = open_page("dashboard", "maya", roles=("maintainer", "reviewer"))
    assert at.metric[0].value == "3"
    assert not at.error, [e.value for e in at.error]  # no "Release blocked: subset-checklist alpha ..."
    assert not any("Agreement" in m.value for m in at.markdown), "mcq gates are not judge gates"
    funnel = next(c for c in at.get("plotly_chart"))
    assert "grammar" not in funnel.proto.spec and "checklist_curation" in funnel.proto.spec


def wire(at: AppTest) -> str:
    """Every element the server sent, as its protobuf text: labels, options, values and widget ids alike."""
    return "\n".join(str(getattr(node, "proto", "")) for block in (at.main, at.sidebar) for node in block)


def test_judge_pages_never_name_systems_and_show_entries_as_typed(judge_ws):
    systems = {r.system for r in task_store.responses(judge_ws)}
    score = open_page("judge_score", "ann1", ("reviewer",))
    sent = wire(score)
    assert "Sample 1" in sent
    for sample in sample_store.samples(judge_ws, "score") + sample_store.samples(judge_ws, "pair"):
        assert sample.id not in sent
    assert not [s for s in systems if s in sent], "a system name reached the score page"
    assert {b.label: b.proto.shortcut for b in score.button} == {"Previous": "p", "Next": "n", "Apply": "ctrl+enter"}
    pair = open_page("judge_pair", "ann2", ("reviewer",))
    assert not [s for s in systems if s in wire(pair)], "a system name reached the pair page"
    review = open_page("judge_responses", "ann1", ("reviewer",))
    assert not [s for s in systems if s in wire(review)], "a system name reached the response review page"
    # a drafted entry written as Markdown and HTML is a checkbox label shown as typed: no bold, no image
    hostile = "Is it **bold**? ![x](http://192.0.2.1/x.png) <img src=http://192.0.2.1/y.png>"
    task = hostile_draft(judge_ws, hostile)
    curation = open_page("judge_checklist", "ann1", ("reviewer",))
    curation.radio(key="judge-checklist_curation-pick").set_value(task).run()
    [box] = [c for c in curation.checkbox if c.key.endswith("-rele-hostile")]
    assert box.label == label_text(hostile) and "![x](" not in box.label and "**bold**" not in box.label


def hostile_draft(ws, text: str) -> str:  # type: ignore[no-untyped-def]
    """Task t2t-01 back before curation, with one more drafted entry whose text is TEXT; returns the task."""
    from curation.kinds.judge.tables import JudgeRecord

    with ws.writing() as s:
        for row in s.execute(select(JudgeRecord).where(JudgeRecord.stage.startswith("checklist_"))).scalars():
            s.delete(row)
    provenance = {"by": "model", "model": "hand", "prompt_sha256": "0" * 64}
    entry = {"id": "rele-hostile", "rubric": "relevance", "text": text, "provenance": provenance}
    draft_store.store_draft(ws, "t2t-01", "hostile", "hand", "hand", {"entries": [entry]})
    return "t2t-01"


def test_query_screening_page_keeps_drops_and_refines_with_a_reason(judge_ws, tmp_path):
    import json

    from curation.kinds.judge.queries import import_queries, query_revisions, query_statuses

    lines = [
        {"id": "q-1", "instruction": "Describe **this** <b>sound</b>.", "output": "text", "source": "AirBench",
         "license": "CC-BY-4.0"},
        {"id": "q-2", "instruction": "Generate an explicit image.", "output": "image", "source": "T2ICompBench",
         "license": "CC-BY-4.0"},
    ]  # fmt: skip
    path = tmp_path / "queries.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_queries(judge_ws, path)
    at = open_page("judge_queries", "ann1")
    assert at.radio(key="judge-queries-pick").value == "q-1"
    assert "Describe **this** <b>sound</b>." in [t.value for t in at.text], "shown as typed"
    click(at, "Submit")
    assert "Choose keep or drop." in at.error[0].value
    at.radio(key="judge-query-decision-q-1").set_value("drop")
    click(at, "Submit")
    assert "needs a reason: nsfw, low_quality, out_of_scope" in at.error[0].value
    at.radio(key="judge-query-decision-q-1").set_value("keep")
    at.text_area(key="judge-query-instruction-q-1").input("Describe this sound in one sentence.")
    click(at, "Submit")
    assert "why" in at.error[0].value, "a rewording needs its reason"
    assert {s.id: s.state for s in query_statuses(judge_ws)}["q-1"] == "screen", "nothing recorded"
    at.text_input(key="judge-query-why-q-1").input("the source asked for no length")
    click(at, "Submit")
    states = {s.id: s.state for s in query_statuses(judge_ws)}
    assert states == {"q-1": "ready", "q-2": "screen"}
    (revision,) = query_revisions(judge_ws, "q-1")
    assert (revision["by"], revision["instruction"]) == ("ann1", "Describe this sound in one sentence.")
    nxt = open_page("judge_queries", "ann2")
    assert nxt.radio(key="judge-queries-pick").value == "q-2"
    nxt.radio(key="judge-query-decision-q-2").set_value("drop")
    nxt.selectbox(key="judge-query-reason-q-2").select("nsfw")
    click(nxt, "Submit")
    assert {s.id: s.reasons for s in query_statuses(judge_ws)}["q-2"] == ["screen:nsfw"]
