"""The subset-checklist page asks the workspace's exclusion rules and records the answers (``exclusions``)."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest
from ui_helpers import APP, advance, attest_rules

from annotation_ui.components import USER_KEY
from annotation_ui.exclusion_form import record_field, restored, unanswered, widget_key
from annotation_ui.logic import SignedIn
from curation.config import CONFIG_NAME
from curation.derived import load_derived
from curation.drafts import load_draft
from curation.exclusion_rules import TRIAD_RULES
from curation.tables import ReviewRecord
from curation.vocab import CHECKLIST_VIEWS


@pytest.fixture(autouse=True)
def _workspace_env(monkeypatch, ui_workspace):
    monkeypatch.setenv("CURATE_WORKSPACE", str(ui_workspace.root))


def open_checklist(reviewer: str = "rev4") -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[USER_KEY] = SignedIn(reviewer, frozenset({"reviewer"}))
    at.run()
    at.switch_page("pages/subset_checklist.py").run()
    assert not at.exception, at.exception
    return at


def tick_every_view(at: AppTest, item: str, answer: str) -> None:
    for n, view in enumerate(CHECKLIST_VIEWS):
        for key in [answer] if view == "text+image+audio" else ["A", "B"]:
            at.checkbox(key=f"cl-{item}-{view}-{key}").check()
        at.run()
        if n < len(CHECKLIST_VIEWS) - 1:
            next(b for b in at.button if b.label == "Next view").click().run()


def submit(at: AppTest):  # type: ignore[no-untyped-def]
    return next(b for b in at.button if b.label == "Submit checklist")


def checklist_records(ws) -> list[ReviewRecord]:  # type: ignore[no-untyped-def]
    with ws.session() as s:
        return list(s.scalars(select(ReviewRecord).where(ReviewRecord.stage == "subset_checklist")))


def test_the_page_asks_every_rule_and_submit_waits_for_the_answers(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at = open_checklist()
    radios = {r.key: r for r in at.radio if r.key and "exclusion" in r.key}
    assert set(radios) == {widget_key("g1-a", rule) for rule in TRIAD_RULES}
    for rule, sentence in TRIAD_RULES.items():
        radio = radios[widget_key("g1-a", rule)]
        assert rule in radio.label and "impersonate" in radios[widget_key("g1-a", "identifying")].label
        assert radio.value is None, "no answer is chosen for the reviewer"
        assert sentence.split()[1] in radio.label
    tick_every_view(at, "g1-a", "A")
    assert submit(at).disabled, "every view is answered, the rules are not"
    assert any("exclusion rule ethics, exclusion rule identifying" in c.value for c in at.caption)
    at.radio(key=widget_key("g1-a", "ethics")).set_value("pass").run()
    assert submit(at).disabled and any("Still open: exclusion rule identifying" in c.value for c in at.caption)
    at.radio(key=widget_key("g1-a", "identifying")).set_value("pass").run()
    assert not submit(at).disabled
    submit(at).click().run()
    assert not at.exception
    (rec,) = checklist_records(ui_workspace)
    assert rec.reviewer == "rev4" and rec.payload["exclusions"] == {"ethics": "pass", "identifying": "pass"}


def test_a_fail_from_the_page_returns_the_item_with_the_rule(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at = open_checklist()
    attest_rules(at, "g1-a", {"identifying": "fail"})
    tick_every_view(at, "g1-a", "A")
    submit(at).click().run()
    (rec,) = checklist_records(ui_workspace)
    assert rec.payload["exclusions"] == {"ethics": "pass", "identifying": "fail"}
    status = load_derived(ui_workspace).status_by_id["g1-a"]
    assert (status.state, status.stage, status.reasons) == ("returned", "subset_checklist", ["exclusion:identifying"])


def test_the_answers_are_kept_in_the_draft_and_restored(ui_workspace):
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at = open_checklist()
    at.radio(key=widget_key("g1-a", "ethics")).set_value("fail").run()
    assert load_draft(ui_workspace, "rev4", "subset_checklist", "item:g1-a")["exclusions"] == {"ethics": "fail"}
    again = open_checklist()  # a reload: a new session resumes the draft
    assert again.radio(key=widget_key("g1-a", "ethics")).value == "fail"
    assert again.radio(key=widget_key("g1-a", "identifying")).value is None


def test_a_workspace_without_rules_asks_none(ui_workspace):
    ui_workspace.settings.review.exclusion_rules = {}
    ui_workspace.settings.save(ui_workspace.root / CONFIG_NAME)
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    at = open_checklist()
    assert not [r for r in at.radio if r.key and "exclusion" in r.key]
    assert all("Exclusion rules" not in h.value for h in at.subheader)
    tick_every_view(at, "g1-a", "A")
    submit(at).click().run()
    (rec,) = checklist_records(ui_workspace)
    assert "exclusions" not in rec.payload


def test_the_form_helpers() -> None:
    rules = {"ethics": "x", "identifying": "y"}
    assert restored({"ethics": "pass", "gone": "fail", "identifying": "maybe"}, rules) == {"ethics": "pass"}
    assert restored(None, rules) == {} and restored(["pass"], rules) == {}
    assert unanswered({"ethics": "fail"}, rules) == ["identifying"]
    assert record_field({"ethics": "fail", "identifying": "pass"}, rules) == {
        "exclusions": {"ethics": "fail", "identifying": "pass"}
    }
    assert record_field({}, {}) == {}
