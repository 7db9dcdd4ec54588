"""Audio sign-off: listen to the clip and rate it on three 1–5 scales (TRIAD App. B.3)."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import flash, queue_picker, require, show_audio, show_error, snapshot, workspace
from annotation_ui.logic import queue, submit_review
from curation.errors import CurateError
from curation.vocab import AUDIO_AXES

HELP = {
    "naturalness": "1 = clearly synthetic or unnatural prosody, 5 = indistinguishable from a natural recording",
    "clarity": "1 = words or cues are hard to make out, 5 = every word and cue is clear",
    "artefacts": "1 = clicks, cuts or distortion throughout, 5 = no audible artefacts",
}

user = require("reviewer")
ws = workspace()
st.title("Audio sign-off")
st.caption("Listen with headphones. A clip is re-recorded when the mean of any axis falls below the threshold.")
snap = snapshot()
item_id = queue_picker("audio", queue(ws, snap, "audio_signoff", user.name))
if item_id is None:
    st.stop()
item = snap.facts[item_id]
show_audio(ws, item.audio)
st.caption(f"Transcript context: {item.context}")
with st.form(f"audio-{item_id}"):
    scores = {axis: st.slider(axis.capitalize(), 1, 5, 3, help=HELP[axis]) for axis in AUDIO_AXES}
    note = st.text_area("Note", placeholder="What sounds wrong, if anything")
    submitted = st.form_submit_button("Submit", type="primary")
if submitted:
    try:
        submit_review(
            ws, {"item": item_id, "stage": "audio_signoff", "reviewer": user.name, "scores": scores, "note": note}
        )
        flash(f"Recorded your ratings of {item_id}.")
        st.rerun()
    except CurateError as exc:
        show_error(exc)
