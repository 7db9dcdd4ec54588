"""Issue 21, cases 1-5, in real Chromium against ``streamlit run`` on SQLite and PostgreSQL: nothing is recorded
against content its reviewer did not see, someone else's record is told and nothing moves on, adjudication
confirms before any label, sign-out is out (on the server too), and typed work survives a reload."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Browser, Page, expect
from test_ui_browser import TIMEOUT, ServerRuns, choose, records, settled, sign_in, wait_for_session_cookie
from ui_helpers import CONTEXT, PASSWORD, advance, passing_record

from annotation_ui.logic import submit_review
from curation.drafts import load_draft
from curation.exposure import EXPOSED
from curation.items import import_items
from curation.kinds import ADJUDICATION
from curation.reviews import PendingReview, record_reviews
from curation.schema import REVIEW_MODELS
from tests.media_factory import item_row, write_items

pytestmark = pytest.mark.browser
CHANGED = "Sure, that was a REALLY helpful suggestion, 真的。"


def wait_for_draft(ws, person: str, page: str, subject: str, field: str, value: object) -> None:
    """Until the draft on the server holds VALUE (a reload before the blur's run saved it would lose it: a
    person does not reload within milliseconds; a test on a loaded machine does)."""
    deadline = time.monotonic() + TIMEOUT / 1000
    while (load_draft(ws, person, page, subject) or {}).get(field) != value:
        assert time.monotonic() < deadline, f"no draft of {field} saved"
        time.sleep(0.2)


def open_after_reload(page: Page, link: str) -> None:
    """After a reload, open LINK's page once the signed-in run that the reload started has ended: a click during
    that run races it (seen under load: a restored note drawn empty)."""
    wait_for_session_cookie(page)
    expect(page.get_by_role("link", name=link)).to_be_visible()
    settled(page)
    page.get_by_role("link", name=link).click()


def open_account(page: Page) -> None:
    """The sidebar's "Sign in" page (past "View more" when the navigation lists more pages than it shows)."""
    link = page.get_by_role("link", name="Sign in")
    more = page.locator('[data-testid="stSidebarNavViewButton"]')
    if not link.is_visible() and more.count() and "more" in more.inner_text().lower():
        more.click()
    link.click()


def test_a_verdict_on_content_that_changed_is_refused_and_the_new_content_shown(
    page: Page, ui_workspace, serve_app, tmp_path
):
    url = serve_app(ui_workspace)
    page.set_default_timeout(TIMEOUT)
    sign_in(page, url, "rev1")
    runs = ServerRuns.of(page)
    mark = runs.mark()
    page.get_by_role("link", name="Grammar pass").click()
    expect(page.get_by_text(CONTEXT, exact=True)).to_be_visible()
    runs.wait_ended(mark)
    mark = runs.mark()
    page.get_by_role("radiogroup", name="Verdict").get_by_text("pass", exact=True).click()
    runs.wait_ended(mark)
    mark = runs.mark()
    page.get_by_label("Note for the author").fill("Reads well to me.")
    page.get_by_label("Note for the author").press("Tab")  # each choice and note runs the page (a draft is kept)
    runs.wait_ended(mark)
    wait_for_draft(ui_workspace, "rev1", "grammar", "item:g1-a", "note", "Reads well to me.")
    # the author saves an edit while rev1 reads revision 1, after the run of rev1's last input has ended (a run
    # still going would show the new revision, with its warning, and the Submit would rightly be recorded)
    import_items(
        ui_workspace, write_items(tmp_path / "src", [item_row("g1-a", answer="A", context=CHANGED)], "e.jsonl")
    )
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_text("stale:grammar", exact=False)).to_be_visible()
    expect(page.get_by_text(CHANGED, exact=True)).to_be_visible()  # the new content, to review again
    expect(page.get_by_label("Note for the author")).to_have_value("Reads well to me.")  # the typed work kept
    assert records(ui_workspace, "g1-a", "grammar") == []
    settled(page)
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_text("Recorded your grammar verdict on g1-a.")).to_be_visible()
    (record,) = records(ui_workspace, "g1-a", "grammar")
    assert (record.reviewer, record.revision, record.payload["note"]) == ("rev1", 2, "Reads well to me.")


def test_two_reviewers_on_the_blind_check_get_different_items_and_a_refusal_names_no_one(
    browser: Browser, ui_workspace, serve_app
):
    """Issue 39, cases 1 and 5: each page reserves the item it offers, so the second reviewer is offered the
    other one (and is told, not given, the first's when they pick it); when a record for their item arrives
    anyway (an import), their submission is refused saying only that the item no longer needs them, with
    their typed note kept."""
    for item, answer in (("g1-a", "A"), ("g1-b", "B")):
        advance(ui_workspace, item, answer, through="subset_checklist")
    url = serve_app(ui_workspace)
    first, second = browser.new_context().new_page(), browser.new_context().new_page()
    for page, name, item in ((first, "maya", "g1-a"), (second, "rev5", "g1-b")):
        page.set_default_timeout(TIMEOUT)
        sign_in(page, url, name)
        runs = ServerRuns.of(page)
        mark = runs.mark()  # the second page's pass comes last: its watcher and mark are what follows reads
        page.get_by_role("link", name="Blind answer check").click()
        expect(page.get_by_role("radiogroup", name="Your answer").get_by_role("radio")).to_have_count(4)
        picker = page.get_by_role("radiogroup", name="Pick an item")
        expect(picker.locator("label:has(input:checked)")).to_have_text(item)
    expect(second.get_by_role("radiogroup", name="Pick an item").get_by_text("g1-a")).to_have_count(0)
    runs.wait_ended(mark)
    mark = runs.mark()
    second.get_by_role("radiogroup", name="Your answer").get_by_text("B. sarcastic").click()
    runs.wait_ended(mark)
    wait_for_draft(ui_workspace, "rev5", "answer_check", "item:g1-b", "choice", "B")
    mark = runs.mark()
    second.get_by_label("Note").fill("The voice sounds sincere.")
    second.get_by_label("Note").press("Tab")
    runs.wait_ended(mark)  # the import comes after the run of rev5's last input
    wait_for_draft(ui_workspace, "rev5", "answer_check", "item:g1-b", "note", "The voice sounds sincere.")
    # maya's answer for g1-b arrives by an import (not through a page: imports take every record)
    imported = REVIEW_MODELS["answer_check"].model_validate(
        {"item": "g1-b", "stage": "answer_check", "reviewer": "maya", "answer": "B"}
    )
    record_reviews(ui_workspace, [PendingReview(0, imported)])  # type: ignore[arg-type]
    second.get_by_role("button", name="Submit").click()
    expect(second.get_by_text("Not recorded.", exact=False)).to_be_visible()
    expect(
        second.get_by_text("g1-b no longer needs your blind answer check: nothing more is needed from you there.")
    ).to_have_count(2)  # the warning above the form and the refusal
    expect(second.get_by_label("Note")).to_have_value("The voice sounds sincere.")
    html = second.content()
    assert "maya" not in html and "answer_check_disagrees" not in html and "← answer" not in html
    assert [r.reviewer for r in records(ui_workspace, "g1-b", "answer_check")] == ["maya"]
    second.get_by_role("button", name="Go on to the next item").click()
    expect(second.get_by_text("Nothing waits for you here", exact=False)).to_be_visible()  # g1-a is maya's


def test_adjudication_shows_no_label_before_the_maintainer_picks_and_confirms(page: Page, ui_workspace, serve_app):
    advance(ui_workspace, "g1-a", "A", "audio_signoff")
    good = passing_record("g1-a", "subset_checklist", "rev3", "A")
    for reviewer in ("rev1", "rev2"):
        consistent = {**good["consistent"], "text+image": ["A"]}
        submit_review(ui_workspace, {**good, "reviewer": reviewer, "consistent": consistent})
    submit_review(ui_workspace, good)
    url = serve_app(ui_workspace)
    page.set_default_timeout(TIMEOUT)
    sign_in(page, url, "maya")
    page.get_by_role("link", name="Adjudicate checklists").click()
    expect(page.get_by_text("Nothing is shown until you pick an item")).to_be_visible()
    assert "← answer" not in page.content() and "grateful" not in page.content()
    choose(page, "Item (1 waiting, 1 held)", "g1-a — held")
    expect(
        page.get_by_text("You would give up 1 blind check(s) you could still do (g1-a)", exact=False)
    ).to_be_visible()
    assert "← answer" not in page.content() and "Reviewers' checklists" not in page.content()
    assert EXPOSED not in {e.action for e in ui_workspace.events("item:g1-a")}
    page.get_by_role("button", name="Show the labels").click()
    expect(page.get_by_text("A. grateful   ← answer", exact=False)).to_be_visible()
    assert EXPOSED in {e.action for e in ui_workspace.events("item:g1-a")}
    page.get_by_label("Reason (required)").fill("两位审稿人同意 text+image")
    page.get_by_label("Reason (required)").press("Tab")
    wait_for_draft(ui_workspace, "maya", "adjudication", "item:g1-a", "reason", "两位审稿人同意 text+image")
    page.reload()  # the consensus being composed is a draft on the server
    open_after_reload(page, "Adjudicate checklists")
    choose(page, "Item (1 waiting, 1 held)", "g1-a — held")
    expect(page.get_by_label("Reason (required)")).to_have_value("两位审稿人同意 text+image")
    page.get_by_role("button", name="Record the consensus").click()
    expect(page.get_by_text("g1-a: consensus recorded", exact=False)).to_be_visible()
    assert len([r for r in records(ui_workspace, "g1-a", ADJUDICATION)]) == 1


def test_sign_out_ends_the_session_everywhere_and_the_next_person_starts_clean(
    browser: Browser, page: Page, ui_workspace, serve_app
):
    advance(ui_workspace, "g1-a", "A", through="audio_signoff")
    url = serve_app(ui_workspace)
    page.set_default_timeout(TIMEOUT)
    sign_in(page, url, "rev4")
    page.get_by_role("link", name="Subset checklist").click()
    page.get_by_text("A. grateful", exact=True).click()
    expect(page.get_by_text("1 of 7 views answered")).to_be_visible()
    copied = page.context.cookies()
    open_account(page)
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Your name", exact=True)).to_be_visible()
    # the next person on the same tab
    page.get_by_label("Your name", exact=True).fill("rev3")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("You are signed in as")).to_be_visible()
    page.get_by_role("link", name="Subset checklist").click()
    expect(page.get_by_text("0 of 7 views answered")).to_be_visible()  # none of rev4's ticks
    expect(page.locator('[data-testid="stCheckbox"] input:checked')).to_have_count(0)
    # rev4's copied cookie, in another browser, signs nobody in
    other = browser.new_context()
    other.add_cookies(copied)
    thief = other.new_page()
    thief.goto(url)
    expect(thief.get_by_label("Your name", exact=True)).to_be_visible(timeout=TIMEOUT)
    expect(thief.get_by_text("You are signed in as")).to_have_count(0)
    # a password change ends rev3's session at the next click
    ui_workspace.set_password("rev3", "a-new-password-9")
    open_account(page)
    expect(page.get_by_label("Your name", exact=True)).to_be_visible()


def test_typed_work_survives_a_reload(page: Page, ui_workspace, serve_app):
    advance(ui_workspace, "g1-b", "B", through="audio_signoff")
    url = serve_app(ui_workspace)
    page.set_default_timeout(TIMEOUT)
    sign_in(page, url, "ann1")
    page.get_by_role("link", name="Write or edit an item").click()
    choose(page, "Item", "g1-a")
    context = page.get_by_label("Context (the text modality)")
    expect(context).to_have_value(CONTEXT)  # g1-a's form is drawn (typing into one a run replaces is lost)
    settled(page)
    context.fill("她说：“真是个好主意。” <b>not bold</b>")
    context.press("Tab")
    wait_for_draft(ui_workspace, "ann1", "author", "item:g1-a", "context", "她说：“真是个好主意。” <b>not bold</b>")
    page.reload()
    open_after_reload(page, "Write or edit an item")
    choose(page, "Item", "g1-a")
    expect(page.get_by_label("Context (the text modality)")).to_have_value("她说：“真是个好主意。” <b>not bold</b>")
    assert ui_workspace.item("g1-a").context == CONTEXT  # a draft is no revision
    sign_in(page, url, "rev4")  # the checklist: two views ticked, then a reload
    page.get_by_role("link", name="Subset checklist").click()
    page.get_by_text("A. grateful", exact=True).click()
    expect(page.get_by_text("1 of 7 views answered")).to_be_visible()
    page.get_by_role("button", name="Next view").click()
    expect(page.get_by_text("View 2 of 7: image")).to_be_visible()
    expect(page.locator('[data-testid="stCheckbox"] input:checked')).to_have_count(0)  # the new view's boxes
    settled(page)
    page.get_by_text("B. sarcastic", exact=True).click()
    expect(page.get_by_text("2 of 7 views answered")).to_be_visible()
    settled(page)
    page.reload()
    open_after_reload(page, "Subset checklist")
    expect(page.get_by_text("2 of 7 views answered")).to_be_visible()
    expect(page.get_by_text("View 2 of 7: image")).to_be_visible()


def test_a_blind_answer_and_its_note_survive_a_reload_and_say_nothing_of_the_label(page: Page, ui_workspace, serve_app):
    """Issue 39, case 6, on the blind answer check (the other review pages: test_ui_drafts.py, through AppTest)."""
    advance(ui_workspace, "g1-b", "B", through="subset_checklist")  # g1-b's label is B
    url = serve_app(ui_workspace)
    page.set_default_timeout(TIMEOUT)
    sign_in(page, url, "rev5")
    page.get_by_role("link", name="Blind answer check").click()
    answer = page.get_by_role("radiogroup", name="Your answer")
    expect(answer.locator("input")).to_have_count(4)
    settled(page)
    answer.get_by_text("C. ambivalent").click()
    wait_for_draft(ui_workspace, "rev5", "answer_check", "item:g1-b", "choice", "C")
    settled(page)
    note = page.get_by_label("Note", exact=True)
    note.fill("Could be read either way.")
    note.press("Tab")
    wait_for_draft(ui_workspace, "rev5", "answer_check", "item:g1-b", "note", "Could be read either way.")
    draft = load_draft(ui_workspace, "rev5", "answer_check", "item:g1-b")
    assert draft is not None and set(draft) == {"choice", "note", "seen"}  # the reviewer's own input only
    page.reload()
    open_after_reload(page, "Blind answer check")
    expect(page.get_by_text("Your draft of this answer was restored.")).to_be_visible()
    answer = page.get_by_role("radiogroup", name="Your answer")
    expect(answer.locator("input").nth(2)).to_be_checked()
    expect(page.get_by_label("Note", exact=True)).to_have_value("Could be read either way.")
    html = page.content()
    assert "← answer" not in html and "sarcastic" in answer.inner_html() and html.count("sarcastic") == 1
    settled(page)
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_text("Recorded your answer for g1-b.")).to_be_visible()
    assert [r.payload["answer"] for r in records(ui_workspace, "g1-b", "answer_check")] == ["C"]
    assert load_draft(ui_workspace, "rev5", "answer_check", "item:g1-b") is None
