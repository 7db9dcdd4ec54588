"""Grammar pass: the item's text, pass or fail, and a note for the author."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue

user, ws, snap, item_id = review_queue(
    "Grammar pass",
    "Read the text as a careful copy editor: spelling, grammar, and whether the options read as a set.",
    "grammar",
    "grammar",
)
item = snap.facts[item_id]
with st.container(border=True):
    st.markdown(f"**Context**\n\n{item.context}")
    st.markdown(f"**Question**\n\n{item.question}")
    st.markdown("\n".join(f"- **{key}.** {text}" for key, text in item.options.items()))
with st.form(f"grammar-{item_id}"):
    verdict = st.radio("Verdict", ["pass", "fail"], index=None, horizontal=True)
    note = st.text_area("Note for the author", placeholder="What to fix, if anything")
    submitted = st.form_submit_button("Submit", type="primary")
if submitted:
    if verdict is None:
        st.error("Choose pass or fail.")
    else:
        record_review(
            ws,
            {"item": item_id, "stage": "grammar", "reviewer": user.name, "verdict": verdict, "note": note},
            f"Recorded your grammar verdict on {item_id}.",
        )
