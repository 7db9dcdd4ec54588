"""Spot check (TRIAD App. B.2): an independent listener checks a sampled voice-acted clip for consistency with
the other actors' clips. Never offered to the clip's speakers, its producer or its item's author (TRIAD B.4)."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import flash, guarded, require, show_audio, show_text, workspace
from curation.audio_production.records import record_spot_check
from curation.audio_production.spot_check import spot_check_queue

user = require("reviewer")
ws = workspace()
st.title("Spot check")
st.caption(
    "Listen to the clip: is its delivery consistent with the other actors' clips (loudness, pace, recording "
    "quality), so that only the intended cue differs?"
)
with guarded("spot check page"):
    offered = spot_check_queue(ws, user.name)
    if not offered:
        st.info("Nothing waits for you: no sampled clip you were not involved in is left to check.")
        st.stop()
    item_id = st.radio("Sampled clip", offered, key="spot-check-pick")
    assert item_id is not None
    item = ws.item(item_id)
    assert item.audio is not None
    show_audio(ws, item.audio)
    show_text("Context", item.context)
    verdict = st.radio("Verdict", ["consistent", "inconsistent"], key=f"spot-{item_id}-verdict", horizontal=True)
    note = st.text_area("What you heard (optional)", key=f"spot-{item_id}-note")
    if st.button("Submit", type="primary", key=f"spot-{item_id}-submit"):
        record_spot_check(ws, item_id, user.name, "inconsistent" if verdict == "inconsistent" else "consistent", note)
        flash(f"Recorded your spot check of {item_id}.")
        st.rerun()
