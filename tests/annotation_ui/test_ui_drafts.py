"""Issue 39, case 6: drafts on every review page. What a reviewer chose and typed on the grammar, audio sign-off,
image screening, blind answer check, group integration, story filter and story revise pages is kept on the server
as they type, comes back in a fresh session of the same person (a reload, or signing in again), and is gone once
the review is recorded. Through ``streamlit.testing.v1.AppTest``; one browser test is in test_ui_team_browser.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_ui_pages import open_page
from ui_helpers import CONTEXT, advance

from annotation_ui.logic import submit_review
from curation.drafts import load_draft
from curation.items import import_items
from curation.screening.items import story_item
from curation.tables import ReviewRecord
from curation.workflow import derive_status
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items


@pytest.fixture(autouse=True)
def _workspace_env(monkeypatch, request):
    """Point the app at the test's workspace."""
    for name in ("ui_workspace", "story_workspace"):
        if name in request.fixturenames:
            monkeypatch.setenv("CURATE_WORKSPACE", str(request.getfixturevalue(name).root))


def session(page: str, name: str, roles: tuple[str, ...] = ("reviewer",)) -> AppTest:
    """A new session of NAME (as after a reload: the session cookie signs them in again) on PAGE."""
    return open_page(page, name, roles)


def pick(at: AppTest, picker: str, subject: str) -> None:
    radio = at.radio(key=f"{picker}-pick")
    if radio.value != subject:
        radio.set_value(subject).run()
    assert not at.exception, at.exception


def restored(at: AppTest) -> bool:
    return any("was restored" in i.value for i in at.info)


def records(ws: Workspace, stage: str) -> list[ReviewRecord]:
    from sqlalchemy import select

    with ws.session() as s:
        return list(s.execute(select(ReviewRecord).where(ReviewRecord.stage == stage)).scalars())


def test_grammar_verdict_and_note_survive_a_reload_and_go_on_submit(ui_workspace, tmp_path):
    at = session("grammar", "rev1")
    pick(at, "grammar", "g1-a")
    assert not restored(at)
    at.radio(key="grammar-g1-a-verdict").set_value("fail").run()
    at.text_area(key="grammar-g1-a-note").input("Option C reads oddly, 真的。").run()
    assert load_draft(ui_workspace, "rev1", "grammar", "item:g1-a") == {
        "verdict": "fail",
        "note": "Option C reads oddly, 真的。",
        "seen": 1,
    }
    assert records(ui_workspace, "grammar") == []  # a draft is no record

    other = session("grammar", "rev2")  # a draft is its person's only
    pick(other, "grammar", "g1-a")
    assert other.radio(key="grammar-g1-a-verdict").value is None and not restored(other)

    again = session("grammar", "rev1")  # the reload
    pick(again, "grammar", "g1-a")
    assert restored(again)
    assert again.radio(key="grammar-g1-a-verdict").value == "fail"
    assert again.text_area(key="grammar-g1-a-note").value == "Option C reads oddly, 真的。"
    again.button(key="grammar-g1-a-submit").click().run()
    assert not again.exception, again.exception
    (rec,) = records(ui_workspace, "grammar")
    assert rec.payload == {"verdict": "fail", "note": "Option C reads oddly, 真的。"}
    assert load_draft(ui_workspace, "rev1", "grammar", "item:g1-a") is None
    assert not restored(session("grammar", "rev1"))


def test_a_draft_restored_onto_changed_content_says_so(ui_workspace, tmp_path):
    at = session("grammar", "rev1")
    pick(at, "grammar", "g1-a")
    at.text_area(key="grammar-g1-a-note").input("Reads well.").run()
    changed = [item_row("g1-a", answer="A", context="Sure, that was a REALLY helpful suggestion.")]
    import_items(ui_workspace, write_items(tmp_path / "src", changed, "e.jsonl"))  # revision 2
    again = session("grammar", "rev1")
    pick(again, "grammar", "g1-a")
    assert again.text_area(key="grammar-g1-a-note").value == "Reads well."
    assert any("g1-a changed since you typed this draft" in w.value for w in again.warning)


def test_clearing_what_was_typed_leaves_no_draft(ui_workspace):
    at = session("grammar", "rev1")
    pick(at, "grammar", "g1-a")
    at.text_area(key="grammar-g1-a-note").input("Typo in B.").run()
    assert load_draft(ui_workspace, "rev1", "grammar", "item:g1-a") is not None
    at.text_area(key="grammar-g1-a-note").input("").run()
    assert load_draft(ui_workspace, "rev1", "grammar", "item:g1-a") is None


def test_audio_ratings_and_note_survive_a_reload_and_go_on_submit(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="grammar")
    at = session("audio_signoff", "rev3")
    pick(at, "audio", "g1-a")
    at.slider(key="audio-g1-a-naturalness").set_value(5).run()
    at.slider(key="audio-g1-a-clarity").set_value(2).run()
    at.text_area(key="audio-g1-a-note").input("A click at 0:02.").run()
    again = session("audio_signoff", "rev3")
    pick(again, "audio", "g1-a")
    assert restored(again)
    assert [again.slider(key=f"audio-g1-a-{axis}").value for axis in ("naturalness", "clarity", "artefacts")] == [
        5,
        2,
        3,
    ]
    assert again.text_area(key="audio-g1-a-note").value == "A click at 0:02."
    again.button(key="audio-g1-a-submit").click().run()
    (rec,) = records(ui_workspace, "audio_signoff")
    assert rec.payload["scores"] == {"naturalness": 5, "clarity": 2, "artefacts": 3}
    assert rec.payload["note"] == "A click at 0:02."
    assert load_draft(ui_workspace, "rev3", "audio_signoff", "item:g1-a") is None


@pytest.fixture
def ai_workspace(ui_workspace: Workspace, tmp_path: Path) -> Workspace:
    """g3-a, whose image is AI-generated, past grammar: awaiting its image screening."""
    row = item_row("g3-a", "g3", answer="A", context=CONTEXT, image="media/gen.jpg")
    row["provenance"] = {**row["provenance"], "image": {"source": "ai_generated", "license": "CC0-1.0"}}
    import_items(ui_workspace, write_items(tmp_path / "gen", [row], "gen.jsonl"))
    advance(ui_workspace, "g3-a", "A", through="grammar")
    return ui_workspace


def test_image_screening_verdict_and_reason_survive_a_reload_and_go_on_submit(ai_workspace):
    at = session("image_screening", "rev3")
    pick(at, "image-screening", "g3-a")
    at.radio(key="screening-g3-a-verdict").set_value("fail").run()
    at.text_area(key="screening-g3-a-note").input("Six fingers on the left hand.").run()
    again = session("image_screening", "rev3")
    pick(again, "image-screening", "g3-a")
    assert restored(again)
    assert again.radio(key="screening-g3-a-verdict").value == "fail"
    assert again.text_area(key="screening-g3-a-note").value == "Six fingers on the left hand."
    again.button(key="screening-g3-a-submit").click().run()
    (rec,) = records(ai_workspace, "image_screening")
    assert rec.payload == {"verdict": "fail", "reason": "Six fingers on the left hand."}
    assert load_draft(ai_workspace, "rev3", "image_screening", "item:g3-a") is None


def type_a_blind_answer(ws: Workspace) -> None:
    """rev5 picks "C" for g1-b (whose label is B) on the blind check and types a note, then leaves."""
    advance(ws, "g1-b", "B", through="subset_checklist")
    at = session("answer_check", "rev5")
    pick(at, "blind", "g1-b")
    at.radio(key="blind-g1-b-choice").set_value("C").run()
    at.text_area(key="blind-g1-b-note").input("The tone could go either way.").run()


def test_blind_answer_check_keeps_the_reviewers_own_answer_and_nothing_of_the_label(ui_workspace):
    type_a_blind_answer(ui_workspace)
    draft = load_draft(ui_workspace, "rev5", "answer_check", "item:g1-b")
    assert draft == {"choice": "C", "note": "The tone could go either way.", "seen": 1}  # the choice, not the label
    assert "B" not in json.dumps(draft) and "sarcastic" not in json.dumps(draft)

    again = session("answer_check", "rev5")
    pick(again, "blind", "g1-b")
    assert restored(again)
    assert again.radio(key="blind-g1-b-choice").value == "C"
    assert again.text_area(key="blind-g1-b-note").value == "The tone could go either way."
    page = "\n".join(str(n.value) for n in again.main if isinstance(getattr(n, "value", None), str))
    assert "← answer" not in page and "answer: B" not in page  # nothing of the label on the restored page
    again.button(key="blind-g1-b-submit").click().run()
    (rec,) = records(ui_workspace, "answer_check")
    assert (rec.reviewer, rec.payload["answer"]) == ("rev5", "C")
    assert load_draft(ui_workspace, "rev5", "answer_check", "item:g1-b") is None


def test_every_run_after_a_restore_hands_the_browser_the_restored_values_until_the_person_acts(ui_workspace):
    """A browser can mount a widget from a later run than the one that restored it (a click right after a reload,
    under load): each run until the person changes their input tells the browser the restored values again, or
    it draws the default under "was restored" while the server holds the draft."""
    type_a_blind_answer(ui_workspace)
    again = session("answer_check", "rev5")
    pick(again, "blind", "g1-b")
    for _ in range(2):  # runs that follow the restoring one, nothing touched
        again.run()
        choice, note = again.radio(key="blind-g1-b-choice"), again.text_area(key="blind-g1-b-note")
        assert restored(again)
        assert choice.proto.set_value and choice.proto.raw_value == r"C\. ambivalent"  # as the browser lists it
        assert (note.proto.set_value, note.proto.value) == (True, "The tone could go either way.")
    again.text_area(key="blind-g1-b-note").input("Read it twice.").run()
    again.run()
    choice, note = again.radio(key="blind-g1-b-choice"), again.text_area(key="blind-g1-b-note")
    assert not restored(again) and not choice.proto.set_value and not note.proto.set_value  # the browser's own
    assert (choice.value, note.value) == ("C", "Read it twice.")
    assert load_draft(ui_workspace, "rev5", "answer_check", "item:g1-b") == {
        "choice": "C",
        "note": "Read it twice.",
        "seen": 1,
    }


def test_group_verdict_and_note_survive_a_reload_and_go_on_submit(ui_workspace):
    for item, answer in (("g1-a", "A"), ("g1-b", "B")):
        advance(ui_workspace, item, answer, through="answer_check")
    roles = ("maintainer", "reviewer")
    at = session("group_integration", "maya", roles)
    assert not [r for r in at.radio if r.label == "Verdict for the group"]  # nothing before the confirm
    next(b for b in at.button if b.label == "Show the labels").click().run()
    at.radio(key="group-g1-verdict").set_value("fail").run()
    at.text_area(key="group-g1-note").input("g1-b's options are reworded.").run()
    assert load_draft(ui_workspace, "maya", "group_integration", "group:g1") is not None

    again = session("group_integration", "maya", roles)  # the labels are known since: no confirm again
    assert restored(again)
    assert again.radio(key="group-g1-verdict").value == "fail"
    assert again.text_area(key="group-g1-note").value == "g1-b's options are reworded."
    again.button(key="group-g1-submit").click().run()
    (rec,) = records(ui_workspace, "group_integration")
    assert rec.subject == "group:g1" and rec.payload == {"verdict": "fail", "note": "g1-b's options are reworded."}
    assert load_draft(ui_workspace, "maya", "group_integration", "group:g1") is None


def test_story_filter_reason_survives_a_reload_and_goes_on_submit(story_workspace):
    at = session("story_filter", "rev1")
    picked = at.radio(key="story-filter-pick").value
    at.text_input(key=f"filter-{picked}-reason").input("The pages do not connect.").run()
    again = session("story_filter", "rev1")
    pick(again, "story-filter", picked)
    assert restored(again)
    assert again.text_input(key=f"filter-{picked}-reason").value == "The pages do not connect."
    again.button(key=f"filter-{picked}-drop").click().run()
    assert not again.exception, again.exception
    (rec,) = records(story_workspace, "filter")
    assert (rec.subject, rec.payload["verdict"], rec.payload["reason"]) == (
        f"item:{picked}",
        "drop",
        "The pages do not connect.",
    )
    assert load_draft(story_workspace, "rev1", "story_filter", f"item:{picked}") is None


def test_story_revise_edits_and_note_survive_a_reload_and_go_on_submit(story_workspace):
    items = sorted(s.id for s in derive_status(story_workspace))
    for item in items:  # revise opens once the transition is kept
        submit_review(story_workspace, {"item": item, "stage": "filter", "reviewer": "rev1", "verdict": "keep"})
    at = session("story_revise", "rev2")
    picked = at.radio(key="story-revise-pick").value
    before = story_item(story_workspace, picked)
    other = next(p for p in ("normal", "high", "low") if p != before.speech.pitch)
    at.text_input(key=f"{picked}:conditions.scene").input("a wet road at dusk").run()
    at.selectbox(key=f"{picked}:speech.pitch").select(other).run()
    at.text_input(key=f"revise-{picked}-note").input("The scene is wet in the picture.").run()
    draft = load_draft(story_workspace, "rev2", "story_revise", f"item:{picked}")
    assert draft == {  # only what the editor changed
        "conditions.scene": "a wet road at dusk",
        "speech.pitch": other,
        "note": "The scene is wet in the picture.",
        "seen": 1,
    }

    again = session("story_revise", "rev2")
    pick(again, "story-revise", picked)
    assert restored(again)
    assert again.text_input(key=f"{picked}:conditions.scene").value == "a wet road at dusk"
    assert again.selectbox(key=f"{picked}:speech.pitch").value == other
    assert again.text_input(key=f"{picked}:speech.utterance").value == before.speech.utterance  # untouched
    assert again.text_input(key=f"revise-{picked}-note").value == "The scene is wet in the picture."
    again.button(key=f"revise-{picked}-submit").click().run()
    assert not again.exception, again.exception
    revised = story_item(story_workspace, picked)
    assert revised.conditions.scene == "a wet road at dusk" and revised.speech.pitch == other
    assert revised.revised_by == {"conditions.scene": "rev2", "speech.pitch": "rev2"}
    assert load_draft(story_workspace, "rev2", "story_revise", f"item:{picked}") is None
