"""Adjudicate checklists: items whose subset-checklist reviewers disagree, each reviewer's checklist side by
side, and a consensus the maintainer picks or composes, with a reason (design.md, Definition 1).

An item whose verdict depends on the combination rule is held (``checklist:disagreement``) until then; the
consensus decides its checklist. The page shows the label, so it records that the maintainer saw it.
"""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import flash, require, show_error, show_options, show_text, snapshot, workspace
from curation.adjudication import adjudication_queue, record_adjudication
from curation.errors import CurateError
from curation.exposure import record_exposure
from curation.kinds.mcq import combine_checklist, well_posedness_reasons

user = require("maintainer")
st.title("Adjudicate checklists")
st.caption(
    "Items whose subset-checklist reviewers disagree. Held items wait here: their verdict depends on how the "
    "reviewers' checklists are combined. Pick or compose the consensus checklist and say why; it decides."
)
ws = workspace()
snap = snapshot()
assert snap.derived is not None
queue = adjudication_queue(ws, snap.derived)
if not queue:
    st.info("Nothing to adjudicate: every checklist at quorum is unanimous or already settled.")
    st.stop()

by_item = {d.item: d for d in queue}
item_id = st.selectbox(
    f"Item ({len(queue)} waiting, {sum(d.held for d in queue)} held)",
    list(by_item),
    format_func=lambda i: f"{i} — held" if by_item[i].held else f"{i} — listed (verdict unaffected)",
    key="adj-item",
)
dispute = by_item[item_id]
item = snap.facts[item_id]

seen = st.session_state.setdefault("adj-exposed", set())
if item_id not in seen:  # this page shows the label: the maintainer will not be offered its blind check
    with ws.writing() as s:
        record_exposure(s, user.name, [user.name], [item_id], "adjudication page")
    seen.add(item_id)
st.warning("This page shows the item's label: you will not be offered its blind answer check.")

left, right = st.columns(2)
with left:
    if item.context:
        show_text("Context", item.context)
    show_text("Question", item.question)
    st.markdown("**Options**")
    show_options(item.options, item.answer)
with right:
    st.markdown("**What each combination rule makes of the reviewers' checklists**")
    st.dataframe(
        [
            {"rule": rule, "verdict": ", ".join(reasons) or "well posed"}
            for rule, reasons in sorted(dispute.verdicts.items())
        ],
        hide_index=True,
    )
    if dispute.held:
        st.error("Held: `checklist:disagreement`. The verdict depends on the rule; a consensus decides it.")
    else:
        st.info("Listed only: every rule gives the same verdict.")

st.subheader("Reviewers' checklists")
reviewers = sorted(dispute.checklists)
st.dataframe(
    [
        {"view": view, **{r: ", ".join(dispute.checklists[r][view]) or "(none fits)" for r in reviewers}}
        for view in dispute.views
    ],
    hide_index=True,
)

st.subheader("Consensus")
starts = {f"{r}'s checklist": dispute.checklists[r] for r in reviewers}
for rule in ("any", "majority"):
    combined = combine_checklist(list(dispute.checklists.values()), rule, dispute.views)
    starts[f"combined by {rule}"] = {view: sorted(keys) for view, keys in combined.items()}
start = st.radio("Start from", list(starts), horizontal=True, key=f"adj-start-{item_id}")
keys = sorted(item.options)
chosen: dict[str, list[str]] = {}
columns = st.columns(min(4, len(dispute.views)))
for n, view in enumerate(dispute.views):
    chosen[view] = columns[n % len(columns)].multiselect(
        view, keys, default=starts[start][view], key=f"adj-{item_id}-{start}-{view}"
    )
reasons = well_posedness_reasons({v: set(k) for v, k in chosen.items()}, item.answer, item.modalities)
if reasons:
    st.warning(f"On this consensus the checklist fails: {', '.join(reasons)} (the item goes back to its author).")
else:
    st.success("On this consensus the checklist passes (Definition 1).")
why = st.text_area("Reason (required)", key=f"adj-reason-{item_id}", placeholder="Why this is the consensus")
if st.button("Record the consensus", type="primary", key=f"adj-record-{item_id}"):
    try:
        done = record_adjudication(ws, item_id, user.name, why, consistent=chosen)
    except CurateError as exc:
        show_error(exc)
    else:
        flash(f"{item_id}: consensus recorded; the item is now {done.state}.")
        st.session_state.pop("adj-item", None)
        st.rerun()
