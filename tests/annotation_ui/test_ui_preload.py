"""The dashboard's browser code is loaded while a maintainer is on the page they signed in to (issue 39): once
per session, for maintainers only, at the addresses Streamlit's own code loads it from."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from playwright.sync_api import Page, expect
from test_ui_browser import TIMEOUT, sign_in
from test_ui_pages import open_page

from annotation_ui.browser_preload import CHUNKS, chunk_files

STATIC_JS = Path(st.__file__).parent / "static" / "static" / "js"


def scripts(at) -> list[str]:  # type: ignore[no-untyped-def]
    """The bodies of the script-running HTML elements of the page's sidebar."""
    return [
        node.proto.body
        for node in at.sidebar
        if getattr(node, "type", "") == "html" and node.proto.unsafe_allow_javascript
    ]


def test_this_streamlit_build_has_every_module_the_dashboard_preloads():
    assert [name.split(".")[0] for name in chunk_files()] == list(CHUNKS)
    assert all((STATIC_JS / name).is_file() for name in chunk_files())


def test_a_maintainer_is_sent_the_preload_once_and_a_reviewer_never(ui_workspace, monkeypatch):
    monkeypatch.setenv("CURATE_WORKSPACE", str(ui_workspace.root))
    at = open_page("sign_in", "maya", ("maintainer", "reviewer"))
    sent = [body for body in scripts(at) if "import(" in body]
    assert len(sent) == 1 and all(name in sent[0] for name in chunk_files())
    at.run()
    assert not [body for body in scripts(at) if "import(" in body]  # the tab has it already
    reviewer = open_page("sign_in", "rev1", ("reviewer",))
    assert not [body for body in scripts(reviewer) if "import(" in body]


def loaded(page: Page, chunk: str) -> int:
    """How many times the browser fetched the module CHUNK (NAME.HASH.js) in this document."""
    return page.evaluate(
        "name => performance.getEntriesByType('resource').filter(e => e.name.includes('/' + name + '.') && e.name.endsWith('.js')).length",
        chunk,
    )


@pytest.mark.browser
def test_in_chromium_the_dashboard_uses_the_code_loaded_at_sign_in(page: Page, streamlit_server):
    url, _ws, _media = streamlit_server
    sign_in(page, url, "rev1")
    page.wait_for_timeout(1_000)
    assert (
        loaded(page, "PlotlyChart") == 0 and not page.locator("html[data-dashboard-code]").count()
    )  # a reviewer's browser loads no chart code it will not use

    sign_in(page, url, "maya")
    expect(page.locator("html[data-dashboard-code=loaded]")).to_have_count(1, timeout=TIMEOUT)
    page.get_by_role("link", name="Dashboard").click()
    expect(page.locator('[data-testid="stPlotlyChart"]:has(.main-svg)').first).to_be_visible(timeout=TIMEOUT)
    expect(page.locator('[data-testid="stDataFrame"]:has(canvas)').first).to_be_visible(timeout=TIMEOUT)
    for chunk in CHUNKS:  # one fetch each: the dashboard found the preloaded modules, it did not load its own
        assert loaded(page, chunk) == 1, chunk
