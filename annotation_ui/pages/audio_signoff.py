"""Audio sign-off: listen to the clip and rate it on three 1–5 scales (TRIAD App. B.3)."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue, show_audio, show_text
from curation.vocab import AUDIO_AXES

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
show_audio(ws, item.audio)
show_text("Transcript context", item.context)
with st.form(f"audio-{item_id}"):
    scores = {axis: st.slider(axis.capitalize(), 1, 5, 3, help=HELP[axis]) for axis in AUDIO_AXES}
    note = st.text_area("Note", placeholder="What sounds wrong, if anything")
    submitted = st.form_submit_button("Submit", type="primary")
if submitted:
    record_review(
        ws,
        {"item": item_id, "stage": "audio_signoff", "reviewer": user.name, "scores": scores, "note": note},
        f"Recorded your ratings of {item_id}.",
    )
