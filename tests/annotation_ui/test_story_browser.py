"""The story filter and revise pages in a real headless Chromium against ``streamlit run``: both pages shown
with their narration as typed, a drop refused without a reason, a keep recorded, then an edit on the revise
page made into a new revision of the item by its editor."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from test_ui_browser import TIMEOUT, settled, sign_in
from ui_helpers import PASSWORD, promote_story

from curation.screening.items import story_item
from curation.workflow import derive_status
from curation.workspace import Workspace

pytestmark = pytest.mark.browser


@pytest.fixture
def story_server(tmp_path, serve_app):
    ws = Workspace.init(tmp_path / "ws")  # SQLite only: one browser run of the story pages is enough
    items = promote_story(ws, tmp_path / "corpus", books=6, top=2)
    for name in ("rev1", "rev2"):
        ws.set_password(name, PASSWORD)
    return serve_app(ws), ws, items


def open_page(page: Page, url: str, name: str, link: str, heading: str) -> None:
    sign_in(page, url, name)
    page.get_by_role("link", name=link).click()
    expect(page.get_by_role("heading", name=heading)).to_be_visible(timeout=TIMEOUT)
    settled(page)


def test_story_filter_and_revise_in_a_browser(page: Page, story_server):
    url, ws, items = story_server
    page.set_default_timeout(TIMEOUT)
    first = items[0]
    transition = story_item(ws, first)

    open_page(page, url, "rev1", "Story filter", "Filter story transitions")
    expect(page.get_by_role("heading", name="Current page")).to_be_visible()
    expect(page.get_by_role("heading", name="Next page (reference)")).to_be_visible()
    expect(page.locator('[data-testid="stImage"]')).to_have_count(2)
    expect(page.get_by_text(transition.current.text, exact=True)).to_be_visible()
    expect(page.get_by_text(transition.next.text, exact=True)).to_be_visible()

    page.get_by_role("button", name="Drop").click()
    settled(page)
    expect(page.get_by_text("a drop needs a reason")).to_be_visible()
    assert {s.id: s.stage for s in derive_status(ws)}[first] == "filter"

    page.keyboard.press("k")  # the Keep button's key
    settled(page)
    expect(page.get_by_text(f"Recorded your filter verdict on {first}.")).to_be_visible()
    assert {s.id: s.stage for s in derive_status(ws)}[first] == "revise"

    open_page(page, url, "rev2", "Story revise", "Revise story annotations")
    expect(page.get_by_text(transition.next.text, exact=True)).to_be_visible()
    scene = page.get_by_label("conditions.scene", exact=True)
    expect(scene).to_have_value(transition.conditions.scene)  # pre-filled with the model's proposal
    scene.fill("a wet road at dusk")
    page.get_by_role("button", name="Submit").click()
    settled(page)
    expect(page.get_by_text(f"{first}: 1 field(s) revised.")).to_be_visible()
    revised = story_item(ws, first)
    assert revised.conditions.scene == "a wet road at dusk"
    assert revised.revised_by == {"conditions.scene": "rev2"}
    assert revised.proposals["conditions"].value["scene"] == transition.conditions.scene  # the proposal is kept
