"""The story filter and revise pages through AppTest, on a workspace with promoted story transitions."""

from __future__ import annotations

from sqlalchemy import select
from streamlit.testing.v1 import AppTest
from ui_helpers import APP

from annotation_ui.components import USER_KEY
from annotation_ui.logic import SignedIn
from curation.screening.items import story_item
from curation.tables import ReviewRecord
from curation.workflow import derive_status


def open_page(page: str, name: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[USER_KEY] = SignedIn(name, frozenset({"reviewer"}))
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def button(at: AppTest, label: str):  # type: ignore[no-untyped-def]
    return next(b for b in at.button if b.label == label)


def _records(ws, stage: str) -> list[ReviewRecord]:  # type: ignore[no-untyped-def]
    with ws.session() as s:
        return list(s.execute(select(ReviewRecord).where(ReviewRecord.stage == stage)).scalars())


def test_filter_page_shows_both_pages_and_needs_a_reason_to_drop(story_workspace) -> None:  # type: ignore[no-untyped-def]
    at = open_page("story_filter", "rev1")
    picked = at.radio(key="story-filter-pick").value
    transition = story_item(story_workspace, picked)
    assert [t.value for t in at.text] == [transition.current.text, transition.next.text]  # shown as typed
    assert [s.value for s in at.subheader] == ["Current page", "Next page (reference)"]
    assert [b.label for b in at.main.button] == ["Keep", "Drop"]  # keys K and D
    assert [b.label for b in at.sidebar.button] == [f"Skip {picked}"]  # hands it back for someone else
    assert any("K keep" in c.value and "D drop" in c.value for c in at.caption)  # the shortcuts, said on the page
    button(at, "Drop").click().run()
    assert "a drop needs a reason" in at.error[0].value and _records(story_workspace, "filter") == []
    button(at, "Keep").click().run()
    assert [(r.subject, r.payload["verdict"]) for r in _records(story_workspace, "filter")] == [
        (f"item:{picked}", "keep")
    ]
    assert picked not in at.radio(key="story-filter-pick").options  # the queue moved on


def test_revise_page_records_an_edit_as_a_revision(story_workspace) -> None:  # type: ignore[no-untyped-def]
    from annotation_ui.logic import submit_review
    from curation.workflow import derive_status

    items = sorted(s.id for s in derive_status(story_workspace))
    for item in items:  # revise opens once the transition is kept
        submit_review(story_workspace, {"item": item, "stage": "filter", "reviewer": "rev1", "verdict": "keep"})
    at = open_page("story_revise", "rev2")
    assert at.radio(key="story-revise-pick").options == items
    picked = at.radio(key="story-revise-pick").value
    at.text_input(key=f"{picked}:conditions.scene").input("a wet road at dusk")
    current = story_item(story_workspace, picked).speech.pitch
    other = next(p for p in ("normal", "high", "low") if p != current)
    at.selectbox(key=f"{picked}:speech.pitch").select(other)
    at.button[0].click().run()
    assert not at.exception, at.exception
    revised = story_item(story_workspace, picked)
    assert revised.conditions.scene == "a wet road at dusk" and revised.speech.pitch == other
    assert revised.revised_by == {"conditions.scene": "rev2", "speech.pitch": "rev2"}
    [record] = _records(story_workspace, "revise")
    assert record.reviewer == "rev2" and record.revision == 2
    assert "2 field(s) revised" in at.success[0].value
    assert picked not in at.radio(key="story-revise-pick").options  # the editor's record signed it off
    # submitting without changes signs an annotation off as it stands, with no new revision
    second = at.radio(key="story-revise-pick").value
    at.button[0].click().run()
    assert story_item(story_workspace, second).revised_by == {}
    assert sorted((r.subject, r.revision) for r in _records(story_workspace, "revise")) == sorted(
        [(f"item:{picked}", 2), (f"item:{second}", 1)]
    )


def test_a_drop_reason_reaches_the_author_and_the_author_page_says_what_it_cannot_edit(story_workspace) -> None:  # type: ignore[no-untyped-def]
    from curation.authoring import returned_inbox
    from curation.screening.items import STORY_AUTHOR

    at = open_page("story_filter", "rev1")
    picked = at.radio(key="story-filter-pick").value
    at.text_input[0].input("the next page **does not** follow <img src=x>")
    button(at, "Drop").click().run()
    assert not at.exception, at.exception
    [entry] = returned_inbox(story_workspace, STORY_AUTHOR)
    assert entry.id == picked and entry.reasons == ["filter:drop"]
    assert [(n.stage, n.reviewer, n.note) for n in entry.notes] == [
        ("filter", "rev1", "the next page **does not** follow <img src=x>")
    ]
    author = AppTest.from_file(str(APP), default_timeout=60)
    author.session_state[USER_KEY] = SignedIn(STORY_AUTHOR, frozenset({"author"}))
    author.run()
    author.switch_page("pages/returned.py").run()
    assert not author.exception, author.exception
    assert "the next page **does not** follow <img src=x>" in [t.value for t in author.text]  # as typed
    assert not [b for b in author.button if b.label == "Edit this item"]  # a story item is not edited there
    assert any("Revise story annotations" in c.value for c in author.caption)
    author.session_state["edit_item"] = picked
    author.switch_page("pages/author.py").run()
    assert not author.exception, author.exception  # was: NotFoundError, medium ... is not in the media store
    assert f"{picked} is a story_transition item, which this page cannot edit" in author.info[0].value
    assert author.selectbox(key="author-target").options == ["New item"]


def test_story_dashboard(story_workspace) -> None:  # type: ignore[no-untyped-def]
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state[USER_KEY] = SignedIn("maya", frozenset({"maintainer"}))
    at.run()
    at.switch_page("pages/dashboard.py").run()
    assert not at.exception, at.exception  # was: KeyError 'text' (story items have no TRIAD taxonomy)
    assert at.metric[0].value == str(len(derive_status(story_workspace)))
    assert any(c.value.startswith("Updated ") and "refreshes itself every 5 s" in c.value for c in at.caption)
    assert not any("Agreement" in m.value for m in at.markdown)


def test_revise_page_refuses_a_submit_against_a_revision_it_did_not_show(story_workspace) -> None:  # type: ignore[no-untyped-def]
    from annotation_ui.logic import submit_review
    from curation.screening.items import revise_items
    from curation.screening.revise import ReviseRecord

    items = sorted(s.id for s in derive_status(story_workspace))
    for item in items:
        submit_review(story_workspace, {"item": item, "stage": "filter", "reviewer": "rev1", "verdict": "keep"})
    at = open_page("story_revise", "rev2")
    picked = at.radio(key="story-revise-pick").value
    at.text_input(key=f"{picked}:conditions.scene").input("a wet road at dusk")
    # another editor revises the same transition while rev2 types
    story_workspace.add_person("rev3", ["reviewer"])
    revise_items(story_workspace, [(0, ReviseRecord(item=picked, reviewer="rev3", edits={"book_meta.topic": "kites"}))])
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert "stale:revise" in at.error[0].value and "(revision 1, now 2)" in at.error[0].value
    assert any("changed since you opened it (revision 1 → 2)" in w.value for w in at.warning)
    assert story_item(story_workspace, picked).conditions.scene != "a wet road at dusk"  # nothing of rev2's saved
    assert [r.reviewer for r in _records(story_workspace, "revise")] == ["rev3"]
    assert at.text_input(key=f"{picked}:conditions.scene").value == "a wet road at dusk"  # the input is kept
    assert at.text_input(key=f"{picked}:book_meta.topic").value == "kites"  # an untouched field shows the change
