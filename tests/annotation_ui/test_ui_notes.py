"""Item notes in the app: edited on the author page (kept in its draft), read on the grammar page, shown beside
their modality on the subset checklist, and never on the blind answer check."""

from __future__ import annotations

import html
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from media_factory import item_row, write_items
from streamlit.testing.v1 import AppTest
from test_ui_pages import open_page, texts
from ui_helpers import CONTEXT, add_people, advance

from annotation_ui.labelstudio.stages import _notes_html, wanted_tasks
from curation.drafts import load_draft
from curation.fact_loading import load_facts
from curation.items import import_items
from curation.vocab import CHECKLIST_VIEWS
from curation.workspace import Workspace

AUDIO = "Flat voice: *sure*, <b>really</b> helpful :material/home: [link](http://x.invalid) — a sigh."
IMAGE = "厨房餐桌旁，一位女士把一盘烤焦的吐司推开 & 皱眉。"


@pytest.fixture
def noted_workspace(workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """Group g1 by ann1: g1-a (answer A) has both notes, g1-b (answer B) none; both await grammar."""
    add_people(workspace)
    rows = [
        item_row("g1-a", answer="A", context=CONTEXT, notes={"audio": AUDIO, "image": IMAGE}),
        item_row("g1-b", answer="B", context=CONTEXT),
    ]
    import_items(workspace, write_items(tmp_path / "src", rows))
    monkeypatch.setenv("CURATE_WORKSPACE", str(workspace.root))
    return workspace


def plain_texts(at: AppTest) -> list[str]:
    """What ``st.text`` drew: text people typed, shown as the characters they typed."""
    return [t.value for t in at.text]


def test_the_author_page_edits_notes_and_keeps_them_in_the_draft(noted_workspace: Workspace) -> None:
    ws = noted_workspace
    at = open_page("author", "ann1", ("author", "reviewer"))
    at.selectbox(key="author-target").select("g1-a").run()
    assert at.text_area(key="author-g1-a-note-audio").value == AUDIO  # the stored notes, as typed
    assert at.text_area(key="author-g1-a-note-image").value == IMAGE
    at.selectbox(key="author-target").select("g1-b").run()
    assert at.text_area(key="author-g1-b-note-audio").value == ""
    at.text_area(key="author-g1-b-note-audio").input("A man laughs, then whispers: 'fine'.").run()
    assert load_draft(ws, "ann1", "author", "item:g1-b")["note-audio"] == "A man laughs, then whispers: 'fine'."  # type: ignore[index]
    at.text_area(key="author-g1-b-note-image").input("   ").run()  # only blanks: no note
    next(b for b in at.button if b.label == "Save item").click().run()
    assert not at.exception, at.exception
    assert ws.item("g1-b").revision == 2
    assert ws.item("g1-b").extra == {"notes": {"audio": "A man laughs, then whispers: 'fine'."}}
    assert load_draft(ws, "ann1", "author", "item:g1-b") is None  # saved: the draft is gone

    at.selectbox(key="author-target").select("g1-a").run()
    at.text_area(key="author-g1-a-note-image").input("").run()  # emptied: the image note goes
    next(b for b in at.button if b.label == "Save item").click().run()
    assert not at.exception, at.exception
    assert ws.item("g1-a").extra == {"notes": {"audio": AUDIO}} and ws.item("g1-a").revision == 2


def test_the_grammar_page_shows_the_notes_as_typed(noted_workspace: Workspace) -> None:
    at = open_page("grammar", "rev1", ("reviewer",))
    assert at.radio(key="grammar-pick").value == "g1-a"
    shown = plain_texts(at)
    assert AUDIO in shown and IMAGE in shown  # st.text: no Markdown, no HTML, no icon
    assert "**Audio note**" in texts(at) and "**Image note**" in texts(at)
    at.radio(key="grammar-pick").set_value("g1-b").run()
    assert "**Audio note**" not in texts(at)  # an item without notes shows none


def test_the_blind_answer_check_never_shows_a_note(noted_workspace: Workspace) -> None:
    advance(noted_workspace, "g1-a", "A", through="subset_checklist")
    at = open_page("answer_check", "rev5", ("reviewer",))
    page = texts(at) + "\n".join(plain_texts(at))
    assert "helpful suggestion" in page  # the item is on screen
    for fragment in ("Flat voice", "sigh", "烤焦", "note"):
        assert fragment not in page.replace("Note", ""), fragment  # ("Note" is the reviewer's own field)


def test_the_subset_checklist_shows_a_note_only_beside_its_modality(noted_workspace: Workspace) -> None:
    advance(noted_workspace, "g1-a", "A", through="audio_signoff")
    at = open_page("subset_checklist", "rev4", ("reviewer",))
    for n, view in enumerate(CHECKLIST_VIEWS):
        assert f"View {n + 1} of 7: {view}" in at.subheader[0].value
        shown = set(view.split("+"))
        assert (AUDIO in plain_texts(at)) == ("audio" in shown), view
        assert (IMAGE in plain_texts(at)) == ("image" in shown), view
        if n < 6:
            next(b for b in at.button if b.label == "Next view").click().run()


def test_label_studio_task_data_escapes_the_notes(noted_workspace: Workspace) -> None:
    with noted_workspace.session() as s:
        facts = {f.id: f for f in load_facts(s)[0]}
    rendered = _notes_html(facts["g1-a"])
    assert "&lt;b&gt;really&lt;/b&gt;" in rendered and "<b>really</b>" not in rendered
    assert "&amp; 皱眉" in rendered
    assert _notes_html(facts["g1-a"], ("text",)) == _notes_html(facts["g1-b"])  # no note shown


def test_label_studio_tasks_carry_notes_where_the_pages_show_them(noted_workspace: Workspace) -> None:
    ws, connection = noted_workspace, SimpleNamespace(media_folder="omnicurate")
    escaped_audio, escaped_image = html.escape(AUDIO), html.escape(IMAGE)
    grammar = {t.subject: t.data for t in wanted_tasks(ws, connection, "grammar")}  # type: ignore[arg-type]
    assert escaped_audio in grammar["item:g1-a"]["notes_html"] and escaped_image in grammar["item:g1-a"]["notes_html"]
    assert AUDIO not in grammar["item:g1-a"]["notes_html"]  # escaped, never as HTML
    assert escaped_audio not in grammar["item:g1-b"]["notes_html"]

    advance(ws, "g1-a", "A", through="audio_signoff")
    tasks = wanted_tasks(ws, connection, "subset_checklist")  # type: ignore[arg-type]
    assert sorted(t.view or "" for t in tasks) == sorted(CHECKLIST_VIEWS)
    for task in tasks:
        assert task.view is not None
        shown = set(task.view.split("+"))
        assert (escaped_audio in task.data["panel"]) == ("audio" in shown), task.view
        assert (escaped_image in task.data["panel"]) == ("image" in shown), task.view

    advance(ws, "g1-a", "A", through="subset_checklist")
    (blind,) = wanted_tasks(ws, connection, "answer_check")  # type: ignore[arg-type]
    data = json.dumps(blind.data, ensure_ascii=False)
    assert "Flat voice" not in data and "烤焦" not in data and "notes" not in data


def test_the_group_reviewer_sees_the_notes_and_the_automatic_checks(noted_workspace: Workspace) -> None:
    ws, connection = noted_workspace, SimpleNamespace(media_folder="omnicurate")
    for item, answer in (("g1-a", "A"), ("g1-b", "B")):
        advance(ws, item, answer, through="answer_check")
    at = open_page("group_integration", "maya", ("reviewer",))
    assert AUDIO not in plain_texts(at)  # nothing of the group before the reviewer agrees to see its labels
    next(b for b in at.button if b.label == "Show the labels").click().run()
    assert AUDIO in plain_texts(at) and IMAGE in plain_texts(at)  # beside g1-a, as typed
    (group,) = wanted_tasks(ws, connection, "group_integration")  # type: ignore[arg-type]
    panel = group.data["panel"]
    assert html.escape(AUDIO) in panel and AUDIO not in panel  # escaped, never as HTML
    # the two sisters share text and image and differ in the audio: the checks pass, as the app's page says
    assert "<b>Automatic checks:</b> all pass." in panel
    assert any("Automatic checks: all pass." in s.value for s in at.success)
