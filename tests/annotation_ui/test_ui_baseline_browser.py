"""The human baseline page in Chromium (issue 45), on SQLite and PostgreSQL: a rater answers an item open-ended
while the page holds none of its options, then in Standard form; the answers are stored as given; people who
authored or reviewed the items are never offered them.

The page keeps no draft of a typed open answer (it does not use ``annotation_ui.page_drafts``), so a reload is
not tested for one."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select
from test_ui_browser import TIMEOUT, expect_said, settled, sign_in
from ui_helpers import advance

from curation.baseline.campaign import assignments_of, create_campaign, rater_queue
from curation.reference_tables import BaselineAnswer
from curation.workspace import Workspace

pytestmark = pytest.mark.browser
OPEN_ANSWER = "they mean the opposite of what they say"


@pytest.fixture
def baseline_server(ui_workspace: Workspace, serve_app: Any) -> tuple[str, Workspace]:
    """Campaign hb over group g1 (g1-a, g1-b, written by ann1); rev1 and rev2 reviewed g1-a's grammar, so of the
    raters offered (ann1, rev1, rev3) only rev3 may answer."""
    advance(ui_workspace, "g1-a", "A", through="grammar")
    create_campaign(ui_workspace, "hb", size=2, raters_per_item=1, seed=4, pool="all", raters=["ann1", "rev1", "rev3"])
    return serve_app(ui_workspace), ui_workspace


def stored(ws: Workspace) -> list[tuple[str, str, str, str, str]]:
    with ws.session() as s:
        rows = s.execute(select(BaselineAnswer).order_by(BaselineAnswer.id)).scalars()
        return [(a.item_id, a.rater, a.form, a.answer, a.source) for a in rows]


def open_baseline(page: Page, url: str, name: str) -> None:
    sign_in(page, url, name)
    page.get_by_role("link", name="Human baseline").click()
    expect(page.get_by_role("heading", name="Human baseline")).to_be_visible()
    settled(page)


def expect_blind_open_form(page: Page, ws: Workspace, item_id: str) -> None:
    """The open form of ITEM_ID is shown, and nothing of its options is in the page."""
    item = ws.item(item_id)
    expect(page.get_by_text("Your answer, in your own words")).to_be_visible()
    expect(page.get_by_text(item.question)).to_be_visible()
    settled(page)
    html = page.content()
    assert not [text for text in item.options.values() if text in html]
    expect(page.get_by_role("radiogroup", name="Options")).to_have_count(0)


def test_a_rater_answers_open_ended_blind_then_standard_and_authors_and_reviewers_are_not_offered_the_items(
    page: Page, baseline_server: tuple[str, Workspace]
) -> None:
    url, ws = baseline_server
    page.set_default_timeout(TIMEOUT)
    with ws.session() as s:
        assert set(assignments_of(s, "hb")) == {"g1-a", "g1-b"}
        assert all(raters == ["rev3"] for raters in assignments_of(s, "hb").values())
    (item_id, form), *_ = rater_queue(ws, "hb", "rev3")
    assert form == "open"
    item = ws.item(item_id)

    open_baseline(page, url, "rev3")
    expect_blind_open_form(page, ws, item_id)
    expect(page.get_by_role("button", name="Submit")).to_be_disabled()  # nothing typed yet
    answer_box = page.locator('[data-testid="stTextArea"] textarea')
    answer_box.fill(OPEN_ANSWER)
    answer_box.press("Tab")
    settled(page)
    page.get_by_role("button", name="Submit").click()
    expect_said(page, f"Recorded your open-ended answer to {item_id}.")
    assert stored(ws) == [(item_id, "rev3", "open", OPEN_ANSWER, "app")]

    settled(page)
    options = page.get_by_role("radiogroup", name="Options")
    for key, text in item.options.items():
        expect(options.get_by_text(f"{key}. {text}", exact=True)).to_be_visible()
    wrong = next(key for key in item.options if key != item.answer)
    options.get_by_text(f"{wrong}. {item.options[wrong]}", exact=True).click()
    settled(page)
    expect(options.locator("input:checked")).to_have_count(1)
    page.get_by_role("button", name="Submit").click()
    expect_said(page, f"Recorded your Standard answer to {item_id}.")
    assert stored(ws) == [(item_id, "rev3", "open", OPEN_ANSWER, "app"), (item_id, "rev3", "standard", wrong, "app")]

    (next_item, next_form), *_ = rater_queue(ws, "hb", "rev3")
    assert next_item != item_id and next_form == "open"
    expect(page.get_by_text("2 answer(s) left.")).to_be_visible()
    expect_blind_open_form(page, ws, next_item)  # the next item starts blind again

    for barred in ("ann1", "rev1"):  # ann1 wrote both items; rev1 reviewed g1-a, which bars its whole group
        assert rater_queue(ws, "hb", barred) == []
        open_baseline(page, url, barred)
        expect(page.get_by_text("No baseline campaign asks you anything")).to_be_visible()
        assert item.question not in page.content()
    assert len(stored(ws)) == 2
