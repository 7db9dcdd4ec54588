"""Adjudicate checklists: items whose subset-checklist reviewers disagree, each reviewer's checklist side by
side, and a consensus the maintainer picks or composes, with a reason (design.md, Definition 1).

An item whose verdict depends on the combination rule is held (``checklist:disagreement``) until then; the
consensus decides its checklist. The page shows the label: nothing is picked on arrival, and for a picked item
the warning, the blind checks given up and a confirm come first (recorded as an exposure), as on Item history.
The consensus and reason being composed are kept as a draft on the server; when another maintainer settles the
item first, the page says who and keeps what was typed.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from annotation_ui.components import (
    flash,
    require,
    reveal_gate,
    show_error,
    show_options,
    show_text,
    snapshot,
    workspace,
)
from annotation_ui.conflicts import why_not_waiting
from curation.adjudication import ChecklistDispute, adjudication_queue, record_adjudication
from curation.drafts import discard_draft, load_draft, save_draft
from curation.errors import CurateError
from curation.kinds import ADJUDICATION
from curation.kinds.mcq import combine_checklist, well_posedness_reasons

PAGE = "adjudication"
HELD, DISPUTE, SHOWN = "adj-held", "adj-dispute", "adj-shown"

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
by_item = {d.item: d for d in queue}
held = st.session_state.get(HELD)
conflict: str | None = None
if held is not None and held not in by_item and held in snap.facts:
    conflict = why_not_waiting(ws, snap, ADJUDICATION, held, user.name)
    st.warning(conflict + " Your consensus was not recorded; it stays below.", icon=":material/group:")
    if st.button("Go on to another item", icon=":material/skip_next:"):
        st.session_state.pop(HELD, None)
        st.rerun()
    item_id: str = held
    dispute: ChecklistDispute = st.session_state[DISPUTE]
else:
    if not queue:
        st.info("Nothing to adjudicate: every checklist at quorum is unanimous or already settled.")
        st.stop()
    picked = st.selectbox(
        f"Item ({len(queue)} waiting, {sum(d.held for d in queue)} held)",
        list(by_item),
        index=None,
        placeholder="Pick an item to adjudicate",
        format_func=lambda i: f"{i} — held" if by_item[i].held else f"{i} — listed (verdict unaffected)",
        key="adj-item",
    )
    if picked is None:
        st.session_state.pop(HELD, None)
        st.caption("Nothing is shown until you pick an item: the page shows its label.")
        st.stop()
    item_id, dispute = picked, by_item[picked]
    st.session_state[HELD], st.session_state[DISPUTE] = item_id, dispute

if not reveal_gate(
    ws, snap, user, [item_id], f"item {item_id} (its answer and the reviewers' checklists)", "page adjudication"
):
    st.stop()
item = snap.facts[item_id]
seen = st.session_state.get(f"{SHOWN}-{item_id}", item.revision)  # what the previous run showed
st.session_state[f"{SHOWN}-{item_id}"] = item.revision
if seen != item.revision:
    st.warning(
        f"{item_id} changed since you opened it (revision {seen} → {item.revision}): what you see now is the new "
        "content. Your consensus and reason are kept.",
        icon=":material/update:",
    )

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
start_key, reason_key = f"adj-start-{item_id}", f"adj-reason-{item_id}"


def view_key(view: str) -> str:
    return f"adj-{item_id}-view-{view}"


def keep_draft() -> None:
    """Copy the consensus being composed to the server: a reload or another device resumes it."""
    save_draft(ws, user.name, PAGE, f"item:{item_id}", draft_now())


def draft_now() -> dict[str, Any]:
    return {
        "start": st.session_state.get(start_key),
        "consistent": {view: list(st.session_state.get(view_key(view), [])) for view in dispute.views},
        "reason": st.session_state.get(reason_key, ""),
    }


def start_from() -> None:
    """The maintainer picked a starting checklist: fill every view from it."""
    for view in dispute.views:
        st.session_state[view_key(view)] = list(starts[st.session_state[start_key]][view])
    keep_draft()


if f"adj-init-{item_id}" not in st.session_state:  # first draw in this tab: resume the draft, else the first start
    draft = load_draft(ws, user.name, PAGE, f"item:{item_id}") or {}
    st.session_state[start_key] = draft.get("start") if draft.get("start") in starts else next(iter(starts))
    chosen_before = draft.get("consistent") or starts[st.session_state[start_key]]
    for view in dispute.views:
        st.session_state[view_key(view)] = [k for k in chosen_before.get(view, []) if k in item.options]
    st.session_state[reason_key] = str(draft.get("reason", ""))
    st.session_state[f"adj-init-{item_id}"] = True
    if draft:
        st.info("Your draft of this consensus was restored.", icon=":material/restore:")

st.radio("Start from", list(starts), horizontal=True, key=start_key, on_change=start_from)
keys = sorted(item.options)
chosen: dict[str, list[str]] = {}
columns = st.columns(min(4, len(dispute.views)))
for n, view in enumerate(dispute.views):
    chosen[view] = columns[n % len(columns)].multiselect(view, keys, key=view_key(view), on_change=keep_draft)
reasons = well_posedness_reasons({v: set(k) for v, k in chosen.items()}, item.answer, item.modalities)
if reasons:
    st.warning(f"On this consensus the checklist fails: {', '.join(reasons)} (the item goes back to its author).")
else:
    st.success("On this consensus the checklist passes (Definition 1).")
why = st.text_area("Reason (required)", key=reason_key, placeholder="Why this is the consensus", on_change=keep_draft)
record, discard, _ = st.columns([2, 2, 3])
if discard.button("Discard my draft", key=f"adj-discard-{item_id}", icon=":material/delete:"):
    discard_draft(ws, user.name, PAGE, f"item:{item_id}")
    for key in (start_key, reason_key, f"adj-init-{item_id}", *(view_key(v) for v in dispute.views)):
        st.session_state.pop(key, None)
    st.rerun()
if record.button("Record the consensus", type="primary", key=f"adj-record-{item_id}"):
    if conflict:
        st.error(f"Not recorded. {conflict}", icon=":material/block:")
    else:
        try:
            done = record_adjudication(ws, item_id, user.name, why, consistent=chosen, revision=seen)
        except CurateError as exc:
            show_error(exc)
        else:
            discard_draft(ws, user.name, PAGE, f"item:{item_id}")
            flash(f"{item_id}: consensus recorded; the item is now {done.state}.")
            for key in (HELD, DISPUTE, "adj-item"):
                st.session_state.pop(key, None)
            st.rerun()
