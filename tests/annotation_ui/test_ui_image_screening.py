"""The AI-image screening page: the queue offers AI-generated images only, never to their author."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from ui_helpers import APP, CONTEXT, add_people, advance

from annotation_ui.components import USER_KEY
from annotation_ui.logic import SignedIn
from curation.items import import_items
from curation.workflow import derive_status
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items


@pytest.fixture
def ai_workspace(workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    add_people(workspace)
    generated = {"source": "ai_generated", "license": "CC0-1.0"}
    rows = [
        item_row("g1-a", answer="A", context=CONTEXT, image="media/gen.jpg"),
        item_row("g1-b", answer="B", context=CONTEXT, image="media/gen.jpg"),
        item_row("g2-a", "g2", answer="A", context="A photo item.", image="media/photo.jpg"),
    ]
    for row in rows[:2]:
        row["provenance"] = {**row["provenance"], "image": generated}
    import_items(workspace, write_items(tmp_path / "src", rows))
    for item, answer in (("g1-a", "A"), ("g1-b", "B")):
        advance(workspace, item, answer, through="grammar")  # the screening comes right after grammar
    monkeypatch.setenv("CURATE_WORKSPACE", str(workspace.root))
    return workspace


def open_screening(name: str, roles: tuple[str, ...]) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[USER_KEY] = SignedIn(name, frozenset(roles))
    at.run()
    at.switch_page("pages/image_screening.py").run()
    assert not at.exception, at.exception
    return at


def test_the_page_records_screenings_and_refuses_a_fail_without_a_reason(ai_workspace: Workspace) -> None:
    at = open_screening("rev1", ("reviewer",))
    assert at.radio(key="image-screening-pick").options == ["g1-a", "g1-b"]  # not the photo item
    assert len(at.get("image")) == 1
    at.radio[1].set_value("fail")
    at.button[0].click().run()
    assert "Say which artefact" in at.error[0].value
    at.radio[1].set_value("fail")
    at.text_area[0].input("Garbled text on the shop sign.")
    at.button[0].click().run()
    status = {s.id: s for s in derive_status(ai_workspace)}
    assert status["g1-a"].state == "returned" and status["g1-a"].reasons == ["ai_image:artefact"]
    assert "Recorded" in at.success[0].value and at.radio(key="image-screening-pick").options == ["g1-b"]
    at.radio[1].set_value("pass")
    at.button[0].click().run()
    status = {s.id: s for s in derive_status(ai_workspace)}
    assert status["g1-b"].reasons == ["ai_image:unscreened"]  # one screening of two


def test_the_author_is_not_offered_their_own_image(ai_workspace: Workspace) -> None:
    at = open_screening("ann1", ("author", "reviewer"))
    assert "Nothing waits for you" in at.info[0].value
