"""Blind answer check: the full item and its options; the author's label is never sent to the browser.

The page builds from ``blind_item``, which has no answer field at all, so nothing here can leak it.
"""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import label_text, record_review, review_queue, show_audio, show_image, show_text
from annotation_ui.logic import blind_item
from annotation_ui.shortcuts import SUBMIT, keys_help, number_keys

user, ws, snap, item_id = review_queue(
    "Blind answer check",
    "Answer the question yourself from the text, the image and the audio together.",
    "blind",
    "answer_check",
)
item = blind_item(snap.facts[item_id])
left, right = st.columns(2)
with left:
    show_image(ws, item.image)
with right:
    show_text("Context", item.context)
    show_audio(ws, item.audio)
show_text("Question", item.question)
with st.form(f"blind-{item_id}"):
    choice = st.radio(
        "Your answer",
        list(item.options),
        index=None,
        format_func=lambda key: label_text(f"{key}. {item.options[key]}"),
    )
    note = st.text_area("Note", placeholder="Anything that made the answer hard to pick")
    submitted = st.form_submit_button("Submit", type="primary", shortcut=SUBMIT)
number_keys("blind", "radio", "Your answer")
keys_help((f"1–{len(item.options)}", "choose an option"), (SUBMIT, "submit"))
if submitted:
    if choice is None:
        st.error("Pick the option you think is right.")
    else:
        record_review(
            ws,
            {"item": item_id, "stage": "answer_check", "reviewer": user.name, "answer": choice, "note": note},
            f"Recorded your answer for {item_id}.",
        )
