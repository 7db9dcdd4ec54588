"""Story revise (Omni-StoryBench App. D, Fig. 11): the model's annotation beside the pages; every edit is a
new revision of the item and the editor's sign-off of it, and the diff against the proposal stays visible."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import flash, release_held, review_queue, show_error
from annotation_ui.story import show_pages
from curation.errors import CurateError
from curation.screening.items import revise_items, story_item
from curation.screening.revise import ReviseRecord, diff_against_proposal, revisable_fields

user, ws, snap, item_id = review_queue(
    "Revise story annotations",
    "Check the book metadata, the next-page conditions and the speech target against the two pages; correct "
    "what is wrong. Submitting without changes signs the annotation off as it stands.",
    "story-revise",
    "revise",
    noun="transition",
)
transition = story_item(ws, item_id)
show_pages(ws, transition)
changes = diff_against_proposal(transition)
if changes:
    st.caption("Changed from the model's proposal so far:")
    st.table([{"field": c.path, "model proposed": str(c.proposed), "now": str(c.current), "by": c.by} for c in changes])
fields = revisable_fields(transition)
with st.form(f"revise-{item_id}"):
    values = {}
    for path, (value, choices) in fields.items():
        if choices:
            values[path] = st.selectbox(
                path, choices, index=choices.index(value) if value in choices else 0, key=f"{item_id}:{path}"
            )
        else:
            values[path] = st.text_input(path, value=value, key=f"{item_id}:{path}")
    note = st.text_input("Note (optional)")
    submitted = st.form_submit_button("Submit", type="primary")
if submitted:
    edits = {path: new for path, new in values.items() if new != fields[path][0]}
    try:
        report = revise_items(ws, [(0, ReviseRecord(item=item_id, reviewer=user.name, edits=edits, note=note))])
        what = f"{len(edits)} field(s) revised" if report.revised else "signed off as it stands"
        release_held()
        flash(f"{item_id}: {what}.")
        st.rerun()
    except CurateError as exc:
        show_error(exc)
