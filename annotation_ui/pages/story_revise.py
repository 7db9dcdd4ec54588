"""Story revise (Omni-StoryBench App. D, Fig. 11): the model's annotation beside the pages; every edit is a
new revision of the item and the editor's sign-off of it, and the diff against the proposal stays visible.

The fields the editor changed and the note are kept as their draft until submitted: a reload resumes them (a field
they did not change is not in the draft, and follows the stored content)."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import flash, release_held, review_queue, show_error
from annotation_ui.page_drafts import Field, PageDraft, is_text, one_of
from annotation_ui.story import show_pages
from curation.errors import CurateError
from curation.screening.items import revise_items, story_item_at
from curation.screening.revise import ReviseRecord, diff_against_proposal, revisable_fields

PAGE = "story_revise"

user, ws, snap, item_id = review_queue(
    "Revise story annotations",
    "Check the book metadata, the next-page conditions and the speech target against the two pages; correct "
    "what is wrong. Submitting without changes signs the annotation off as it stands.",
    "story-revise",
    "revise",
    noun="transition",
)
transition, revision = story_item_at(ws, item_id)
shown_key = f"story-revise-shown:{item_id}"
seen = st.session_state.get(shown_key, revision)  # what the previous run showed: the one a submit answers
st.session_state[shown_key] = revision
if seen != revision:
    st.warning(
        f"{item_id} changed since you opened it (revision {seen} → {revision}): what you see now is the new "
        "content. Your input is kept; check it against the new content before you submit.",
        icon=":material/update:",
    )
show_pages(ws, transition)
changes = diff_against_proposal(transition)
if changes:
    st.caption("Changed from the model's proposal so far:")
    st.table(
        [
            {
                "field": c.path,
                "model proposed": str(c.proposed) if c.proposal else "(no proposal)",
                "now": str(c.current),
                "by": c.by,
            }
            for c in changes
        ]
    )
fields = revisable_fields(transition)
starts = {path: value if not choices or value in choices else choices[0] for path, (value, choices) in fields.items()}
draft = PageDraft(
    ws,
    user.name,
    PAGE,
    f"item:{item_id}",
    {
        **{
            path: Field(f"{item_id}:{path}", starts[path], one_of(choices) if choices else is_text)
            for path, (_value, choices) in fields.items()
        },
        "note": Field(f"revise-{item_id}-note", "", is_text),
    },
    revision,
    "revision",
)
draft.restore()  # the fields the person changed (the others start from the stored content), and the note
for path in fields:
    # a field the person has not touched follows the stored content (another editor's change shows, and a submit
    # does not silently put the old value back); one they changed keeps what they typed
    key, shown = f"{item_id}:{path}", f"story-revise-field:{item_id}:{path}"
    current = starts[path]
    if key not in st.session_state or st.session_state[key] == st.session_state.get(shown):
        st.session_state[key] = current
    st.session_state[shown] = current
# no st.form: a form sends nothing before its submit, so nothing typed in it could be kept as a draft
values = {}
for path, (_value, choices) in fields.items():
    if choices:
        values[path] = st.selectbox(path, choices, key=f"{item_id}:{path}", on_change=draft.keep)
    else:
        values[path] = st.text_input(path, key=f"{item_id}:{path}", on_change=draft.keep)
note = st.text_input("Note (optional)", key=f"revise-{item_id}-note", on_change=draft.keep)
if st.button("Submit", type="primary", key=f"revise-{item_id}-submit"):
    edits = {path: new for path, new in values.items() if new != fields[path][0]}
    try:
        record = ReviseRecord(item=item_id, reviewer=user.name, edits=edits, note=note, revision=seen)
        report = revise_items(ws, [(0, record)])
        what = f"{len(edits)} field(s) revised" if report.revised else "signed off as it stands"
        draft.discard()
        for key in draft.keys:
            st.session_state.pop(key, None)
        release_held()
        st.session_state.pop(shown_key, None)  # the new revision is this person's own: nothing to warn about
        flash(f"{item_id}: {what}.")
        st.rerun()
    except CurateError as exc:
        show_error(exc)
