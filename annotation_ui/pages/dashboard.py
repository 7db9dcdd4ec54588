"""Maintainer dashboard: where items stall (funnel, reasons), what the benchmark covers (taxonomy leaves,
group sizes), who reviews how much, and every item one click away from its history."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from annotation_ui.components import PAGE_SIZES, dashboard_cache, gates_cache, require, snapshot, workspace
from annotation_ui.dashboard import item_ids, item_rows
from annotation_ui.logic import page_of
from curation.kinds import stage_names
from curation.staffing import describe
from curation.vocab import STATES

STAGES = stage_names()

require("maintainer")
st.title("Dashboard")
snap = snapshot()
if dashboard_cache().is_fresh(snap) and gates_cache().is_fresh(snap):
    data, gates = dashboard_cache().get(snap), gates_cache().get(workspace(), snap)
else:  # after a change: the figures are computed again, once
    with st.spinner("Counting stages, reasons and agreement…"):
        data, gates = dashboard_cache().get(snap), gates_cache().get(workspace(), snap)

for row in data.staffing:  # a pool too small for the separation rule: say which stage and what would fix it
    st.warning(describe(row), icon=":material/group_add:")

cols = st.columns(4)
cols[0].metric("Items", data.total)
cols[1].metric("Admitted", data.states["admitted"])
cols[2].metric("Admission rate", "–" if data.admission_rate is None else f"{data.admission_rate:.0%}")
cols[3].metric("Returned to authors", data.states["returned"])

left, right = st.columns(2)
with left:
    st.subheader("Funnel by stage")
    funnel = go.Figure(
        go.Funnel(y=[*STAGES, "admitted"], x=[*data.reached.values(), data.states["admitted"]], textinfo="value")
    )
    funnel.update_layout(margin=dict(l=10, r=10, t=10, b=10), height=320)
    st.plotly_chart(funnel, width="stretch")
    st.dataframe(
        [{"stage": stage, **{state: data.stages[stage].get(state, 0) for state in STATES}} for stage in STAGES]
        + [{"stage": "(every stage passed)", **{state: data.states[state] for state in ("held", "admitted")}}],
        hide_index=True,
    )
with right:
    st.subheader("Taxonomy leaves")
    leaves = [leaf for leaf in data.leaves if leaf.items]
    if leaves:
        modalities = sorted({leaf.modality for leaf in leaves})
        sunburst = go.Figure(
            go.Sunburst(
                ids=[*modalities, *(f"{leaf.modality}/{leaf.leaf}" for leaf in leaves)],
                labels=[*modalities, *(leaf.leaf for leaf in leaves)],
                parents=[*("" for _ in modalities), *(leaf.modality for leaf in leaves)],
                values=[*(0 for _ in modalities), *(leaf.items for leaf in leaves)],
            )
        )
        sunburst.update_layout(margin=dict(l=10, r=10, t=10, b=10), height=360)
        st.plotly_chart(sunburst, width="stretch")
    else:
        st.info("No items yet.")

left, right = st.columns(2)
with left:
    st.subheader("Reasons")
    if data.reasons:
        top = data.reasons[:20]
        bars = go.Figure(go.Bar(x=[c for _, c in top], y=[r for r, _ in top], orientation="h"))
        bars.update_layout(
            margin=dict(l=10, r=10, t=10, b=10), height=40 + 24 * len(top), yaxis=dict(autorange="reversed")
        )
        st.plotly_chart(bars, width="stretch")
    else:
        st.caption("No open reasons.")
    st.subheader("Group sizes")
    st.dataframe(
        [{"sisters": size, "groups": n} for size, n in data.group_sizes.items()], hide_index=True, width="content"
    )
with right:
    st.subheader("Reviewers' workload")
    st.dataframe(data.workload, hide_index=True)

st.subheader("Gates: agreement, audits, probes")
left, right = st.columns(2)
with left:
    st.markdown("**Agreement** (`curate agreement`)")
    st.dataframe(gates.agreement, hide_index=True)
    for message in gates.agreement_failures:
        st.error(f"Release blocked: {message}")
    if not gates.agreement_failures:
        st.caption("Every agreement threshold of curate.toml is met.")
    st.markdown(f"**Adjudication queue** ({len(gates.adjudication)})")
    if gates.adjudication:
        st.dataframe(gates.adjudication, hide_index=True)
with right:
    st.markdown(f"**Duplicate clusters** ({len(gates.clusters)}, from the last `curate audit`)")
    if gates.clusters:
        st.dataframe(gates.clusters, hide_index=True)
    st.markdown(f"**Leaks** ({len(gates.leaks)})")
    if gates.leaks:
        st.dataframe(gates.leaks, hide_index=True)
    st.markdown("**Probe checker verdicts** (`curate check`)")
    if gates.probe_verdicts:
        st.dataframe([{"verdict": v, "items": n} for v, n in gates.probe_verdicts.items()], hide_index=True)
    else:
        st.caption("No probe run on the current content yet.")

if st.toggle("Show agreement plots (heatmaps, per-view and per-leaf bars)", key="dash-plots"):
    with st.spinner("Drawing the agreement plots…"):
        plots = gates_cache().plots(workspace(), snap)
    for title, png in plots:
        st.image(png, caption=title)

st.subheader("Items")
st.caption("Select a row to open the item's history.")
f1, f2, f3 = st.columns(3)
state = f1.selectbox("State", ["all", *STATES], key="dash-state")
ids = item_ids(snap, None if state == "all" else state)
size = f2.selectbox("Per page", PAGE_SIZES, index=1, key="dash-size")
pages = max(1, -(-len(ids) // size))
number = f3.number_input(f"Page (of {pages})", min_value=1, max_value=pages, value=1, key="dash-page")
page = page_of(ids, int(number), int(size))
rows = item_rows(snap, page.ids)
picked = st.dataframe(rows, hide_index=True, on_select="rerun", selection_mode="single-row", key="dash-items")
selected = picked.selection.rows if picked else []
if selected:
    st.session_state["history_item"] = rows[selected[0]]["item"]
    st.switch_page("pages/history.py")
