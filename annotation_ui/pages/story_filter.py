"""Story filter (Omni-StoryBench App. D, Fig. 10): keep or drop a selected transition, with a reason to drop."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue
from annotation_ui.story import show_pages
from curation.screening.items import story_item

user, ws, snap, item_id = review_queue(
    "Filter story transitions",
    "Does the next page follow from the current one, and are both pages fit for a benchmark? Keep it, or drop it "
    "and say why.",
    "story-filter",
    "filter",
    noun="transition",
)
transition = story_item(ws, item_id)
show_pages(ws, transition)
with st.form(f"filter-{item_id}"):
    verdict = st.radio("Verdict", ["keep", "drop"], index=None, horizontal=True)
    reason = st.text_input("Reason (required to drop)", placeholder="e.g. the pages do not connect")
    submitted = st.form_submit_button("Submit", type="primary")
if submitted:
    if verdict is None:
        st.error("Choose keep or drop.")
    else:
        record_review(
            ws,
            {"item": item_id, "stage": "filter", "reviewer": user.name, "verdict": verdict, "reason": reason},
            f"Recorded your filter verdict on {item_id}.",
        )
