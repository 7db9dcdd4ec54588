"""The app under a team (issue 21, cases 1-5) through ``AppTest``: records name what their reviewer saw,
someone else's record is told and nothing moves on, adjudication confirms before the label, sign-out clears
the tab, and drafts survive a reload (a new AppTest is a new browser session)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from test_ui_pages import open_page, records, texts
from ui_helpers import APP, CONTEXT, PASSWORD, advance, passing_record

from annotation_ui.components import TOKEN_KEY, USER_KEY
from annotation_ui.logic import SignedIn, submit_review
from annotation_ui.signin import verify_token
from curation.items import import_items
from curation.kinds import ADJUDICATION
from curation.reservations import holders
from tests.media_factory import item_row, write_items


@pytest.fixture(autouse=True)
def _workspace_env(monkeypatch, ui_workspace):
    monkeypatch.setenv("CURATE_WORKSPACE", str(ui_workspace.root))


def edit_context(ws, tmp_path, text: str) -> None:
    """The author saves a new revision of g1-a in another browser."""
    import_items(ws, write_items(tmp_path / "src", [item_row("g1-a", answer="A", context=text)], "edit.jsonl"))


def test_a_grammar_verdict_on_content_that_changed_is_refused_and_kept(ui_workspace, tmp_path):
    at = open_page("grammar", "rev1", ("reviewer",))
    assert CONTEXT in texts(at)
    edit_context(ui_workspace, tmp_path, "Sure, that was a REALLY helpful suggestion.")
    at.radio[-1].set_value("pass")
    at.text_area[0].input("Reads well.")
    at.button[0].click().run()
    assert not records(ui_workspace, "grammar")  # not stored against revision 2, which rev1 never saw
    warned = " ".join(w.value for w in at.warning)
    assert "stale:grammar" in warned and "revision 1 → 2" in warned
    assert "REALLY helpful" in texts(at)  # the new content is on screen
    assert at.text_area[0].value == "Reads well." and at.radio[-1].value == "pass"  # the typed work is kept
    at.button[0].click().run()  # submitted again, now against what the page showed
    (rec,) = records(ui_workspace, "grammar")
    assert (rec.reviewer, rec.revision, rec.payload["note"]) == ("rev1", 2, "Reads well.")


def test_a_blind_check_someone_else_recorded_first_is_told_and_nothing_moves_on(ui_workspace):
    for item, answer in (("g1-a", "A"), ("g1-b", "B")):
        advance(ui_workspace, item, answer, through="subset_checklist")
    submit_review(ui_workspace, passing_record("g1-a", "answer_check", "rev5", "A"))  # g1-a done by rev5
    at = open_page("answer_check", "maya", ("maintainer", "reviewer"))
    assert at.radio(key="blind-pick").value == "g1-b"
    submit_review(ui_workspace, {"item": "g1-b", "stage": "answer_check", "reviewer": "rev5", "answer": "B"})
    answer = next(r for r in at.radio if r.label == "Your answer")
    answer.set_value(answer.options[2])
    at.text_area[0].input("The tone is hard to read.")
    next(b for b in at.button if b.label == "Submit").click().run()
    assert [r.reviewer for r in records(ui_workspace, "answer_check") if r.subject == "item:g1-b"] == ["rev5"]
    said = " ".join(e.value for e in [*at.warning, *at.error])
    # blind means blind: that it no longer needs them, not who checked it nor what became of the item
    assert "g1-b no longer needs your blind answer check: nothing more is needed from you there." in said
    assert "rev5" not in said and "answer_check_disagrees" not in said and "returned" not in said
    assert "Not recorded" in said
    assert at.text_area[0].value == "The tone is hard to read."  # the typed input stays on screen
    assert "blind-pick" not in [r.key for r in at.radio]  # no queue picker: nothing moved on by itself
    next(b for b in at.button if b.label == "Go on to the next item").click().run()
    assert "Nothing waits for you here" in texts(at)


def disputed(ws) -> None:
    advance(ws, "g1-a", "A", "audio_signoff")
    good = passing_record("g1-a", "subset_checklist", "rev3", "A")
    for reviewer in ("rev1", "rev2"):
        submit_review(ws, {**good, "reviewer": reviewer, "consistent": {**good["consistent"], "text+image": ["A"]}})
    submit_review(ws, good)


def adjudication_tab() -> AppTest:
    at = open_page("adjudication", "maya", ("maintainer", "reviewer"))
    at.selectbox(key="adj-item").select("g1-a").run()
    if any(b.label == "Show the labels" for b in at.button):
        next(b for b in at.button if b.label == "Show the labels").click().run()
    return at


def test_a_consensus_recorded_in_another_tab_is_told_and_the_typed_reason_stays(ui_workspace):
    disputed(ui_workspace)
    first, second = adjudication_tab(), adjudication_tab()
    second.text_area(key="adj-reason-g1-a").input("rev3 saw the audio right").run()
    first.text_area(key="adj-reason-g1-a").input("two of three agree").run()
    first.button(key="adj-record-g1-a").click().run()
    assert len(records(ui_workspace, ADJUDICATION)) == 1
    second.button(key="adj-record-g1-a").click().run()
    assert len(records(ui_workspace, ADJUDICATION)) == 1  # the second tab's consensus is not recorded
    said = " ".join(e.value for e in [*second.warning, *second.error])
    assert "you already recorded the consensus checklist of g1-a" in said and "Not recorded" in said
    assert second.text_area(key="adj-reason-g1-a").value == "rev3 saw the audio right"
    assert "adj-item" not in [s.key for s in second.selectbox]  # the tab did not move to another item


def test_drafts_of_the_consensus_survive_a_reload(ui_workspace):
    disputed(ui_workspace)
    at = adjudication_tab()
    at.radio(key="adj-start-g1-a").set_value("rev3's checklist").run()
    at.text_area(key="adj-reason-g1-a").input("原因：第三位审稿人听了音频").run()
    again = adjudication_tab()  # a reload: a new session of the same person
    assert again.text_area(key="adj-reason-g1-a").value == "原因：第三位审稿人听了音频"
    assert again.multiselect(key="adj-g1-a-view-text+image").value == ["A", "B", "C", "D"]
    assert any("draft of this consensus was restored" in i.value for i in again.info)


def test_checklist_ticks_and_view_survive_a_reload_and_progress_counts_the_view_on_screen(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at = open_page("subset_checklist", "rev4", ("reviewer",))
    at.checkbox(key="cl-g1-a-text-A").check().run()
    assert at.get("progress")[0].proto.text == "1 of 7 views answered"  # the view on screen counts at once
    next(b for b in at.button if b.label == "Next view").click().run()
    at.checkbox(key="cl-g1-a-image-B").check().run()
    assert at.get("progress")[0].proto.text == "2 of 7 views answered"
    again = open_page("subset_checklist", "rev4", ("reviewer",))
    assert again.get("progress")[0].proto.text == "2 of 7 views answered"
    assert "View 2 of 7: image" in again.subheader[0].value
    assert again.checkbox(key="cl-g1-a-image-B").value is True


def test_author_fields_survive_a_reload(ui_workspace):
    at = open_page("author", "ann1", ("author", "reviewer"))
    at.selectbox(key="author-target").select("g1-a").run()
    at.text_area(key="author-g1-a-context").input("她说：“真是个好主意。”").run()
    again = open_page("author", "ann1", ("author", "reviewer"))
    again.selectbox(key="author-target").select("g1-a").run()
    assert again.text_area(key="author-g1-a-context").value == "她说：“真是个好主意。”"
    assert ui_workspace.item("g1-a").context == CONTEXT  # a draft is no revision


def test_signing_out_clears_the_tab_and_the_next_person_starts_clean(ui_workspace):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.text_input(key="sign-in-name").input("rev4")
    at.text_input(key="sign-in-password").input(PASSWORD)
    at.button[0].click().run()
    token = at.session_state[TOKEN_KEY]
    assert verify_token(ui_workspace, token) == SignedIn("rev4", frozenset({"reviewer"}))
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at.switch_page("pages/subset_checklist.py").run()
    at.checkbox(key="cl-g1-a-text-A").check().run()
    at.switch_page("pages/sign_in.py").run()
    next(b for b in at.button if b.label == "Sign out").click().run()
    assert USER_KEY not in at.session_state and "cl-ticks-g1-a" not in at.session_state
    assert verify_token(ui_workspace, token) is None  # the cookie, copied anywhere, signs nobody in
    at.text_input(key="sign-in-name").input("rev3")
    at.text_input(key="sign-in-password").input(PASSWORD)
    at.button[0].click().run()
    at.switch_page("pages/subset_checklist.py").run()
    assert at.get("progress")[0].proto.text == "0 of 7 views answered"  # nothing of rev4's ticks


def blind_ready(ws) -> None:
    for item, answer in (("g1-a", "A"), ("g1-b", "B")):
        advance(ws, item, answer, through="subset_checklist")


def test_two_people_on_the_blind_page_are_offered_different_items(ui_workspace):
    """Each page reserves what it offers: the second person is offered the other item, and not the first's."""
    blind_ready(ui_workspace)
    first = open_page("answer_check", "maya", ("maintainer", "reviewer"))
    second = open_page("answer_check", "rev5", ("reviewer",))
    mine, theirs = first.radio(key="blind-pick").value, second.radio(key="blind-pick").value
    assert {mine, theirs} == {"g1-a", "g1-b"}
    assert second.radio(key="blind-pick").options == [theirs]  # the first's item is held: not offered
    assert holders(ui_workspace, "answer_check") == {f"item:{mine}": {"maya"}, f"item:{theirs}": {"rev5"}}
    answer = next(r for r in second.radio if r.label == "Your answer")
    answer.set_value(answer.options[0])
    next(b for b in second.button if b.label == "Submit").click().run()
    assert [r.reviewer for r in records(ui_workspace, "answer_check")] == ["rev5"]
    assert holders(ui_workspace, "answer_check") == {f"item:{mine}": {"maya"}}  # the record released its hold


def test_a_skip_hands_the_item_back_for_someone_else(ui_workspace):
    blind_ready(ui_workspace)
    at = open_page("answer_check", "rev5", ("reviewer",))
    assert at.radio(key="blind-pick").value == "g1-a"
    next(b for b in at.sidebar.button if b.label == "Skip g1-a").click().run()
    assert at.radio(key="blind-pick").value == "g1-b"  # on to the next one; g1-a comes last for rev5
    assert holders(ui_workspace, "answer_check") == {"item:g1-b": {"rev5"}}
    other = open_page("answer_check", "maya", ("maintainer", "reviewer"))
    assert other.radio(key="blind-pick").value == "g1-a"  # the skipped item went to someone else


def test_signing_out_releases_what_the_person_held(ui_workspace):
    blind_ready(ui_workspace)
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.text_input(key="sign-in-name").input("rev5")
    at.text_input(key="sign-in-password").input(PASSWORD)
    at.button[0].click().run()
    at.switch_page("pages/answer_check.py").run()
    assert holders(ui_workspace, "answer_check") == {"item:g1-a": {"rev5"}}
    at.switch_page("pages/sign_in.py").run()
    next(b for b in at.button if b.label == "Sign out").click().run()
    assert holders(ui_workspace, "answer_check") == {}
