"""Audio sign-off: listen to the clip and rate it on three 1–5 scales (TRIAD App. B.3). The ratings and note are
kept as the reviewer's draft until submitted: a reload resumes them."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue, show_audio, show_text
from annotation_ui.page_drafts import Field, PageDraft, int_between, is_text
from curation.audio_production.credits import credits_of, listener_refusal
from curation.vocab import AUDIO_AXES

PAGE = "audio_signoff"
LOW, HIGH, START = 1, 5, 3

HELP = {
    "naturalness": "1 = clearly synthetic or unnatural prosody, 5 = indistinguishable from a natural recording",
    "clarity": "1 = words or cues are hard to make out, 5 = every word and cue is clear",
    "artefacts": "1 = clicks, cuts or distortion throughout, 5 = no audible artefacts",
}

user, ws, snap, item_id = review_queue(
    "Audio sign-off",
    "Listen with headphones. A clip is re-recorded when the mean of any axis falls below the threshold.",
    "audio",
    "audio_signoff",
)
item = snap.facts[item_id]
refusal = listener_refusal(user.name, item_id, credits_of(ws.item(item_id).provenance).people)
if refusal:  # TRIAD B.4: listeners were not involved in recording
    st.error(refusal)
    st.stop()
show_audio(ws, item.audio)
show_text("Transcript context", item.context)
fields = {axis: Field(f"audio-{item_id}-{axis}", START, int_between(LOW, HIGH)) for axis in AUDIO_AXES}
fields["note"] = Field(f"audio-{item_id}-note", "", is_text)
draft = PageDraft(ws, user.name, PAGE, f"item:{item_id}", fields, item.revision, "rating")
draft.restore()
# no st.form: a form sends nothing before its submit, so nothing typed in it could be kept as a draft
scores = {
    axis: st.slider(axis.capitalize(), LOW, HIGH, help=HELP[axis], key=fields[axis].key, on_change=draft.keep)
    for axis in AUDIO_AXES
}
note = st.text_area("Note", placeholder="What sounds wrong, if anything", key=fields["note"].key, on_change=draft.keep)
if st.button("Submit", type="primary", key=f"audio-{item_id}-submit"):
    record_review(
        ws,
        {"item": item_id, "stage": "audio_signoff", "reviewer": user.name, "scores": scores, "note": note},
        f"Recorded your ratings of {item_id}.",
        forget=draft.keys,
        draft=draft.target,
    )
