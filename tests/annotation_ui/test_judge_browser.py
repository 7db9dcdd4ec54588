"""The score page in a real headless Chromium against ``streamlit run``: Apply, Previous, Next, a reload that
keeps the choices being made (a draft on the server), and resume in a new browser session, signed in again."""

from __future__ import annotations

import pytest
from judge_helpers import build_judge_template, copy_workspace
from playwright.sync_api import Page, expect
from test_ui_browser import TIMEOUT, settled, sign_in, wait_for_session_cookie
from test_ui_team_browser import wait_for_draft

from curation.drafts import load_draft
from curation.kinds.judge import annotation_store, sample_store
from curation.kinds.judge.rubrics import CRITERIA

pytestmark = pytest.mark.browser


@pytest.fixture
def judge_server(tmp_path, serve_app):
    template = build_judge_template(tmp_path / "template", tasks=("t2t-01", "v2t-01"))
    ws = copy_workspace(template, tmp_path / "ws")
    return serve_app(ws), ws


def choose(page: Page, criterion: str, value: str) -> None:
    """Pick a score once the last choice's run has finished.

    Each choice saves a draft and reruns the page; while it runs, Streamlit keeps the old radio group on the
    page, marked stale, beside the new one. Only a group outside stale containers is clicked.
    """
    settled(page)
    live = page.locator('[data-testid="stElementContainer"]:not([data-stale="true"])')
    group = live.get_by_role("radiogroup", name=criterion.capitalize())
    expect(group).to_have_count(1, timeout=TIMEOUT)
    group.get_by_text(value, exact=True).click()
    expect(group.get_by_role("radio", name=value, exact=True)).to_be_checked(timeout=TIMEOUT)
    settled(page)


def open_score_page(page: Page, url: str) -> None:
    sign_in(page, url, "ann1")
    page.get_by_role("link", name="Score annotation").click()
    expect(page.get_by_role("heading", name="Score annotation")).to_be_visible(timeout=TIMEOUT)


def test_score_page_in_a_browser(page: Page, judge_server):
    url, ws = judge_server
    page.set_default_timeout(TIMEOUT)
    first, second = (s.id for s in sample_store.samples(ws, "score")[:2])
    shown = {first: "Sample 1", second: "Sample 2"}  # annotators see numbers: sample ids name the systems
    open_score_page(page, url)
    expect(page.get_by_text(shown[first], exact=True)).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text("[relevance]").first).to_be_visible(timeout=TIMEOUT)  # the checklist beside the response
    choose(page, "overall", "2")
    settled(page)
    page.get_by_role("button", name="Next").click()
    settled(page)
    expect(page.get_by_text(shown[second], exact=True)).to_be_visible(timeout=TIMEOUT)
    settled(page)
    page.get_by_role("button", name="Previous").click()
    settled(page)
    expect(page.get_by_text(shown[first], exact=True)).to_be_visible(timeout=TIMEOUT)
    overall = page.get_by_role("radiogroup", name="Overall")
    expect(overall.locator("input:checked")).to_have_count(1, timeout=TIMEOUT)  # the draft came back
    assert load_draft(ws, "ann1", "judge_score", first) == {"overall": 2}, "a draft, not an annotation"
    assert annotation_store.annotation(ws, first, "ann1") is None

    for criterion in CRITERIA:
        choose(page, criterion, "4")
    settled(page)
    page.get_by_role("button", name="Apply").click()
    settled(page)
    expect(page.get_by_text("Applied Sample 1.")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text(shown[second], exact=True)).to_be_visible(timeout=TIMEOUT)
    saved = annotation_store.annotation(ws, first, "ann1")
    assert saved.applied and saved.payload["scores"] == dict.fromkeys(CRITERIA, 4)
    assert load_draft(ws, "ann1", "judge_score", first) is None, "applied: the draft is dropped"

    # a reload keeps the choices being made on the second sample (each is a draft on the server at once)
    settled(page)  # the second sample's run has finished: its radios, not the first's, are on the page
    choose(page, "clarity", "5")
    wait_for_draft(ws, "ann1", "judge_score", second, "clarity", 5)
    page.reload()
    wait_for_session_cookie(page)
    expect(page.get_by_text("Your unsaved draft of Sample 2 was restored.")).to_be_visible(timeout=TIMEOUT)
    clarity = page.get_by_role("radiogroup", name="Clarity")
    expect(clarity.locator("input:checked")).to_have_count(1, timeout=TIMEOUT)
    expect(clarity.get_by_role("radio", name="5")).to_be_checked(timeout=TIMEOUT)

    # a new browser session, signed in again: the page resumes after the applied sample
    open_score_page(page, url)
    expect(page.get_by_text(shown[second], exact=True)).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text(shown[first], exact=True)).to_have_count(0, timeout=TIMEOUT)
