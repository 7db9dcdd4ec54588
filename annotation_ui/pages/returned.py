"""Returned to you: the author's items that a stage sent back, with reason codes and reviewers' notes."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import other_kind_hint, require, snapshot, workspace
from curation.authoring import returned_inbox
from curation.kinds.mcq import MCQ

EDIT_ITEM = "edit_item"

user = require("author")
ws = workspace()
st.title("Returned to you")
snap = snapshot()
inbox = returned_inbox(ws, user.name, snap.statuses)
kinds = {st.id: st.kind for st in snap.statuses}
if not inbox:
    st.success("Nothing is waiting for you: none of your items has been sent back.")
    st.stop()
st.caption(f"{len(inbox)} item(s) to revise. Saving an edit makes a new revision; unchanged stages keep their reviews.")
for entry in inbox:
    with st.container(border=True):
        st.markdown(f"#### {entry.id}  \nGroup `{entry.group}` · sent back at **{entry.stage}**")
        st.markdown("Reasons: " + ", ".join(f"`{reason}`" for reason in entry.reasons))
        for note in entry.notes:
            st.markdown(f"**{note.reviewer}** ({note.stage}):")
            st.text(note.note)
        if kinds.get(entry.id, MCQ.name) != MCQ.name:
            st.caption(other_kind_hint(kinds[entry.id]))
        elif st.button("Edit this item", key=f"edit-{entry.id}", icon=":material/edit:"):
            st.session_state[EDIT_ITEM] = entry.id
            st.switch_page("pages/author.py")
