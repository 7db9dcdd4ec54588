"""Takes (TRIAD App. B.2): a producer uploads the takes of the clips they produce and chooses the most natural
one; every choice is recorded (``curate audio list-takes``), and only the item's audio is ever released."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from annotation_ui.components import flash, guarded, require, show_audio, workspace
from curation.audio_production.gates import audio_findings
from curation.audio_production.loaded import load_audio_facts
from curation.audio_production.records import add_take, choose_take, takes_of
from curation.audio_production.spot_check import produced_by

user = require("producer")
ws = workspace()
st.title("Takes")
st.caption("Upload each take of a clip you produce, listen, and choose the most natural one.")
with guarded("takes page"):
    items = produced_by(ws, user.name)
    if not items:
        st.info("No item's audio names you as its producer (`provenance.audio.producer`).")
        st.stop()
    item_id = st.selectbox("Item", items, key="takes-item")
    assert item_id is not None
    facts = load_audio_facts(ws)
    reasons = audio_findings(ws, facts)["takes"][item_id][0]
    st.markdown("Open: " + ", ".join(f"`{r}`" for r in reasons) if reasons else "Takes complete.")
    takes = takes_of(ws, item_id)
    chosen = facts.choices.get(item_id)
    for take in takes:
        mark = " (chosen)" if chosen is not None and chosen.take == take.take else ""
        st.markdown(f"**{take.take}**{mark}")
        show_audio(ws, take.sha256)
    st.subheader("Add a take")
    form = f"takes-{item_id}-{st.session_state.get(f'takes-{item_id}-added', 0)}"  # a fresh form after each take
    name = st.text_input("Take name", placeholder=f"t{len(takes) + 1}", key=f"{form}-name").strip()
    uploaded = st.file_uploader("Recording", type=["wav", "flac", "ogg", "mp3"], key=f"{form}-file")
    if st.button("Add take", key=f"{form}-add", disabled=not (name and uploaded)):
        assert uploaded is not None
        with tempfile.TemporaryDirectory(prefix="curate-take-") as tmp:
            path = Path(tmp) / Path(uploaded.name).name
            path.write_bytes(uploaded.getvalue())
            add_take(ws, item_id, name, path, user.name)
        flash(f"Added take {name} of {item_id}.")
        st.session_state[f"takes-{item_id}-added"] = st.session_state.get(f"takes-{item_id}-added", 0) + 1
        st.rerun()
    if takes:
        st.subheader("Choose")
        names = [t.take for t in takes]
        pick = st.radio(
            "The most natural take",
            names,
            index=names.index(chosen.take) if chosen and chosen.take in names else 0,
            key=f"takes-{item_id}-pick",
            horizontal=True,
        )
        note = st.text_area("Why this take (optional)", key=f"takes-{item_id}-note")
        if st.button("Choose this take", type="primary", key=f"takes-{item_id}-choose"):
            choose_take(ws, item_id, str(pick), user.name, note)
            flash(f"Recorded take {pick} as your choice for {item_id}.")
            st.rerun()
