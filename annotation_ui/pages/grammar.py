"""Grammar pass: the item's text, pass or fail, and a note for the author."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue, show_options, show_text, verdict_form

user, ws, snap, item_id = review_queue(
    "Grammar pass",
    "Read the text as a careful copy editor: spelling, grammar, and whether the options read as a set.",
    "grammar",
    "grammar",
)
item = snap.facts[item_id]
with st.container(border=True):
    show_text("Context", item.context)
    show_text("Question", item.question)
    st.markdown("**Options**")
    show_options(item.options)
answer = verdict_form(f"grammar-{item_id}", "Verdict", "Note for the author", "What to fix, if anything")
if answer is not None:
    verdict, note = answer
    record_review(
        ws,
        {"item": item_id, "stage": "grammar", "reviewer": user.name, "verdict": verdict, "note": note},
        f"Recorded your grammar verdict on {item_id}.",
    )
