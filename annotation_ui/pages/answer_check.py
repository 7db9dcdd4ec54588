"""Blind answer check: the full item and its options; the author's label is never sent to the browser.

The page builds from ``blind_item``, which has no answer field at all, so nothing here can leak it. The reviewer's
own choice and note are kept as their draft until submitted (a reload resumes them); the draft holds those two
and the revision shown, nothing of the label.
"""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import label_text, record_review, review_queue, show_audio, show_image, show_text
from annotation_ui.logic import blind_item
from annotation_ui.page_drafts import Field, PageDraft, is_text, one_of
from annotation_ui.shortcuts import SUBMIT, keys_help, number_keys

PAGE = "answer_check"

user, ws, snap, item_id = review_queue(
    "Blind answer check",
    "Answer the question yourself from the text, the image and the audio together.",
    "blind",
    "answer_check",
)
revision = snap.facts[item_id].revision
item = blind_item(snap.facts[item_id])
left, right = st.columns(2)
with left:
    show_image(ws, item.image)
with right:
    show_text("Context", item.context)
    show_audio(ws, item.audio)
show_text("Question", item.question)
fields = {
    "choice": Field(f"blind-{item_id}-choice", None, one_of(item.options)),  # the reviewer's own answer
    "note": Field(f"blind-{item_id}-note", "", is_text),
}
draft = PageDraft(ws, user.name, PAGE, f"item:{item_id}", fields, revision, "answer")
draft.restore()
# no st.form: a form sends nothing before its submit, so nothing typed in it could be kept as a draft
choice = st.radio(
    "Your answer",
    list(item.options),
    index=None,
    format_func=lambda key: label_text(f"{key}. {item.options[key]}"),
    key=fields["choice"].key,
    on_change=draft.keep,
)
note = st.text_area(
    "Note",
    placeholder="Anything that made the answer hard to pick",
    key=fields["note"].key,
    on_change=draft.keep,
)
submitted = st.button("Submit", type="primary", shortcut=SUBMIT, key=f"blind-{item_id}-submit")
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
            forget=draft.keys,
            draft=draft.target,
        )
