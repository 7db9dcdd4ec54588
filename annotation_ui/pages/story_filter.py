"""Story filter (Omni-StoryBench App. D, Fig. 10): keep or drop a selected transition, with a reason to drop (keys K and D)."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue
from annotation_ui.shortcuts import keys_help
from annotation_ui.story import show_pages
from curation.screening.items import story_item

KEEP, DROP = "K", "D"

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
    reason = st.text_input("Reason (required to drop)", placeholder="e.g. the pages do not connect")
    keep_col, drop_col, _ = st.columns([1, 1, 3])
    keep = keep_col.form_submit_button("Keep", type="primary", icon=":material/check:", shortcut=KEEP)
    drop = drop_col.form_submit_button("Drop", icon=":material/close:", shortcut=DROP)
keys_help((KEEP, "keep"), (DROP, "drop (type the reason first)"))
if keep or drop:
    record_review(
        ws,
        {
            "item": item_id,
            "stage": "filter",
            "reviewer": user.name,
            "verdict": "keep" if keep else "drop",
            "reason": reason,
        },
        f"Recorded your filter verdict on {item_id}.",
    )
