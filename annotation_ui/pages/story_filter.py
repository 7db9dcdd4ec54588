"""Story filter (Omni-StoryBench App. D, Fig. 10): keep or drop a selected transition, with a reason to drop (keys K and D).
The reason is kept as the reviewer's draft until a verdict is recorded: a reload resumes it."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue
from annotation_ui.page_drafts import Field, PageDraft, is_text
from annotation_ui.shortcuts import keys_help
from annotation_ui.story import show_pages
from curation.screening.items import story_item

KEEP, DROP = "K", "D"
PAGE = "story_filter"

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
shown = snap.facts[item_id].revision if item_id in snap.facts else None
fields = {"reason": Field(f"filter-{item_id}-reason", "", is_text)}
draft = PageDraft(ws, user.name, PAGE, f"item:{item_id}", fields, shown, "reason")
draft.restore()
# no st.form: a form sends nothing before its submit, so nothing typed in it could be kept as a draft
reason = st.text_input(
    "Reason (required to drop)",
    placeholder="e.g. the pages do not connect",
    key=fields["reason"].key,
    on_change=draft.keep,
)
keep_col, drop_col, _ = st.columns([1, 1, 3])
keep = keep_col.button("Keep", type="primary", icon=":material/check:", shortcut=KEEP, key=f"filter-{item_id}-keep")
drop = drop_col.button("Drop", icon=":material/close:", shortcut=DROP, key=f"filter-{item_id}-drop")
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
        forget=draft.keys,
        draft=draft.target,
    )
