"""The audio production pages in Chromium (issue 45): a producer uploads three takes of a clip and chooses one; an
independent listener spot-checks the sampled clip. SQLite only, as the app's other browser tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from media_factory import make_tone
from playwright.sync_api import Page, expect
from test_ui_browser import TIMEOUT, expect_said, settled, sign_in, type_into, upload
from ui_helpers import CONTEXT, PASSWORD, add_people

from curation.audio_production.gates import audio_findings
from curation.audio_production.loaded import load_audio_facts
from curation.items import import_items
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items

pytestmark = pytest.mark.browser


@pytest.fixture
def voiced_server(tmp_path: Path, serve_app: Any) -> tuple[str, Workspace]:
    ws = Workspace.init(tmp_path / "ws")
    add_people(ws)
    ws.add_person("spk1", ["speaker"])
    ws.add_person("prod", ["producer"])
    ws.set_password("prod", PASSWORD)
    row = item_row("g1-a", answer="A", context=CONTEXT)
    row["provenance"]["audio"] |= {"speakers": ["spk1"], "producer": "prod"}
    import_items(ws, write_items(tmp_path / "src", [row]))
    return serve_app(ws), ws


def test_a_producer_uploads_three_takes_and_chooses_one_then_a_listener_spot_checks(
    page: Page, voiced_server: tuple[str, Workspace], tmp_path: Path
) -> None:
    url, ws = voiced_server
    page.set_default_timeout(TIMEOUT)
    sign_in(page, url, "prod")
    page.get_by_role("link", name="Takes").click()
    expect(page.get_by_text("takes:too_few")).to_be_visible()
    settled(page)
    for n in (1, 2, 3):
        type_into(page, "Take name", f"t{n}")
        upload(page, 0, make_tone(tmp_path / f"take-{n}.wav", 200.0 * n))
        expect(page.get_by_role("button", name="Add take")).to_be_enabled()  # the server holds name and file
        page.get_by_role("button", name="Add take").click()
        expect_said(page, f"Added take t{n} of g1-a.")
        settled(page)
    assert [t.take for t in load_audio_facts(ws).takes["g1-a"]] == ["t1", "t2", "t3"]
    page.get_by_text("t2", exact=True).last.click()
    settled(page)
    page.get_by_role("button", name="Choose this take").click()
    expect_said(page, "Recorded take t2 as your choice for g1-a.")
    assert load_audio_facts(ws).choices["g1-a"].take == "t2"
    assert audio_findings(ws)["takes"]["g1-a"][0] == ["takes:choice_not_item_audio"]  # t2 is not the item's audio
    sign_in(page, url, "rev1")
    page.get_by_role("link", name="Spot check").click()
    expect(page.get_by_text("Sampled clip")).to_be_visible()
    page.get_by_text("inconsistent", exact=True).click()
    settled(page)
    page.get_by_role("button", name="Submit").click()
    expect_said(page, "Recorded your spot check of g1-a.")
    assert audio_findings(ws)["spot_check"]["g1-a"][0] == ["spot_check:inconsistent"]
