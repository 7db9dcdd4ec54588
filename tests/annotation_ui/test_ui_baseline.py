"""The human baseline page: a rater answers open-ended first (no options), then Standard; a grader grades after
being told the page shows the labels, and is then exposed to them."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from ui_helpers import APP

from annotation_ui.components import USER_KEY
from annotation_ui.logic import SignedIn
from curation.baseline.campaign import create_campaign, rater_queue
from curation.baseline.report import baseline_report
from curation.drafts import load_draft
from curation.exposure import exposed_people
from curation.workspace import Workspace


@pytest.fixture
def campaign_ws(demo_workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    create_campaign(demo_workspace, "hb", size=2, raters_per_item=1, seed=4, pool="all", raters=["rev5"])
    monkeypatch.setenv("CURATE_WORKSPACE", str(demo_workspace.root))
    return demo_workspace


def exposed(ws: Workspace, item_id: str) -> set[str]:
    with ws.session() as s:
        return exposed_people(s, item_id)


def open_page(name: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[USER_KEY] = SignedIn(name, frozenset({"reviewer"}))
    at.run()
    at.switch_page("pages/baseline.py").run()
    assert not at.exception, at.exception
    return at


def test_a_rater_answers_open_ended_first_then_standard_and_a_grader_grades(campaign_ws: Workspace) -> None:
    (item_id, form), *_ = rater_queue(campaign_ws, "hb", "rev5")
    assert form == "open"
    item = campaign_ws.item(item_id)
    at = open_page("rev5")
    shown = " ".join(t.value for t in at.text)
    assert item.question in shown and not any(text in shown for text in item.options.values())
    assert len(at.radio) == 1  # the task choice only: no options on the open form
    at.text_area(key=f"baseline-{item_id}-open").input("the speaker is being sarcastic").run()
    at.button(key=f"baseline-{item_id}-open-submit").click().run()
    assert not at.exception, at.exception
    assert at.radio(key=f"baseline-{item_id}-standard").options == [f"{k}. {v}" for k, v in item.options.items()]
    at.radio(key=f"baseline-{item_id}-standard").set_value(item.answer).run()
    at.button(key=f"baseline-{item_id}-standard-submit").click().run()
    assert rater_queue(campaign_ws, "hb", "rev5")[0][0] != item_id
    report = baseline_report(campaign_ws, "hb", 50, 0, 0.9)
    assert report["human"]["standard"]["acc_q"]["value"] == 1.0 and report["human"]["open_ended"]["ungraded"] == 1

    grader = open_page("rev6")
    grader.radio(key="baseline-mode").set_value("Grade open-ended answers").run()
    assert "rev6" not in exposed(campaign_ws, item_id)
    assert not grader.button  # nothing shown before the grader agrees to see the labels
    grader.checkbox(key="baseline-grade-reveal").check().run()
    assert item.options[item.answer] in " ".join(t.value for t in grader.text)
    next(b for b in grader.button if b.label == "Correct").click().run()
    assert not grader.exception, grader.exception
    assert "rev6" in exposed(campaign_ws, item_id)
    report = baseline_report(campaign_ws, "hb", 50, 0, 0.9)
    assert report["human"]["open_ended"]["acc_q"]["value"] == 1.0


def test_a_typed_answer_survives_a_reload_and_goes_with_the_submission(campaign_ws: Workspace) -> None:
    (item_id, _), *_ = rater_queue(campaign_ws, "hb", "rev5")
    item = campaign_ws.item(item_id)
    at = open_page("rev5")
    at.text_area(key=f"baseline-{item_id}-open").input("half an answer").run()
    again = open_page("rev5")  # a reload: a new browser session of the same person
    assert again.text_area(key=f"baseline-{item_id}-open").value == "half an answer"
    assert any("draft of this answer was restored" in i.value for i in again.info)
    again.button(key=f"baseline-{item_id}-open-submit").click().run()
    again.radio(key=f"baseline-{item_id}-standard").set_value(item.answer).run()
    later = open_page("rev5")  # the Standard choice is a draft too, and the submitted open answer is none
    assert later.radio(key=f"baseline-{item_id}-standard").value == item.answer
    later.button(key=f"baseline-{item_id}-standard-submit").click().run()
    assert not later.exception, later.exception
    assert rater_queue(campaign_ws, "hb", "rev5")[0][0] != item_id
    for form in ("open", "standard"):
        assert load_draft(campaign_ws, "rev5", f"baseline:hb:{form}", f"item:{item_id}") is None
