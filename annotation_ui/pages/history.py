"""An item's history: every event on it and its group, oldest first, with the state it is in now.

The events hold the item's label (its content, checklist records, blind answers): the page says so first and
shows them after a confirm, recorded as an exposure."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import require, reveal_gate, show_error, snapshot, workspace
from annotation_ui.logic import history_rows
from curation.errors import CurateError

HISTORY_ITEM = "history_item"

user = require("maintainer")
ws = workspace()
snap = snapshot()
st.title("Item history")
item_id = st.text_input(
    "Item id", value=st.session_state.get(HISTORY_ITEM, ""), placeholder="e.g. kitchen-01-a"
).strip()
if not item_id:
    st.stop()
if item_id not in snap.facts:
    st.error(f"No item {item_id!r} in this workspace.")
    st.stop()
st.session_state[HISTORY_ITEM] = item_id
# The history holds the label (the item's content, checklist records' full view, blind answers): say so first.
if not reveal_gate(ws, snap, user, [item_id], f"item {item_id} (its content and review records)", "page history"):
    st.stop()
status = snap.status_by_id[item_id]
st.markdown(
    f"**{item_id}** · group `{status.group}` · state **{status.state}**"
    + (f" at `{status.stage}`" if status.stage else "")
    + (f" · reasons: {', '.join(f'`{r}`' for r in status.reasons)}" if status.reasons else "")
)
try:
    st.dataframe(history_rows(ws, item_id), hide_index=True, width="stretch")
except CurateError as exc:
    show_error(exc)
