"""Grammar pass: the item's text (with its audio and image notes, when it has them), pass or fail, and a note for
the author (kept as the reviewer's draft until submitted: a reload resumes them)."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue, show_options, show_text, verdict_form
from annotation_ui.page_drafts import PageDraft, verdict_fields
from curation.notes import NOTE_LABELS, item_notes

PAGE = "grammar"

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
    for modality, note in item_notes(item.extra).items():  # notes are text too: the stage reads them
        show_text(NOTE_LABELS[modality], note)
form = f"grammar-{item_id}"
draft = PageDraft(ws, user.name, PAGE, f"item:{item_id}", verdict_fields(form), item.revision, "verdict")
answer = verdict_form(form, "Verdict", "Note for the author", "What to fix, if anything", draft)
if answer is not None:
    verdict, note = answer
    record_review(
        ws,
        {"item": item_id, "stage": "grammar", "reviewer": user.name, "verdict": verdict, "note": note},
        f"Recorded your grammar verdict on {item_id}.",
        forget=draft.keys,
        draft=draft.target,
    )
