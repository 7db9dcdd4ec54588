"""Blind answer check: the full item and its options; the author's label is never sent to the browser.

The page builds from ``blind_item``, which has no answer field at all, so nothing here can leak it.
"""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import (
    flash,
    queue_picker,
    require,
    show_audio,
    show_error,
    show_image,
    snapshot,
    workspace,
)
from annotation_ui.logic import blind_item, queue, submit_review
from curation.errors import CurateError

user = require("reviewer")
ws = workspace()
st.title("Blind answer check")
st.caption("Answer the question yourself from the text, the image and the audio together.")
snap = snapshot()
item_id = queue_picker("blind", queue(ws, snap, "answer_check", user.name))
if item_id is None:
    st.stop()
item = blind_item(snap.facts[item_id])
left, right = st.columns(2)
with left:
    show_image(ws, item.image)
with right:
    st.markdown(f"**Context**\n\n{item.context}")
    show_audio(ws, item.audio)
with st.form(f"blind-{item_id}"):
    choice = st.radio(
        item.question, list(item.options), index=None, format_func=lambda key: f"{key}. {item.options[key]}"
    )
    note = st.text_area("Note", placeholder="Anything that made the answer hard to pick")
    submitted = st.form_submit_button("Submit", type="primary")
if submitted:
    if choice is None:
        st.error("Pick the option you think is right.")
    else:
        try:
            submit_review(
                ws, {"item": item_id, "stage": "answer_check", "reviewer": user.name, "answer": choice, "note": note}
            )
            flash(f"Recorded your answer for {item_id}.")
            st.rerun()
        except CurateError as exc:
            show_error(exc)
