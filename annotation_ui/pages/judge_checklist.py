"""Checklist curation and cross-check (Judge Anything §2.2, App. B.3): select 1–6 of each rubric's entries,
rewrite or add one (curator); a second person selects blind among the curated candidates (cross-check)."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import current_user, flash, guidelines_panel, label_text, queue_picker, workspace
from annotation_ui.judge_ui import remember_shown, require_annotator, show_refusal, show_task
from curation.errors import CurateError
from curation.kinds.judge import draft_store, record_store, task_store
from curation.kinds.judge.checklists import shown_per_rubric
from curation.kinds.judge.rubrics import RUBRICS
from curation.kinds.judge.schema import ChecklistSelectionRecord

user = require_annotator(current_user())
ws = workspace()
limits = record_store.bounds(ws)
st.title("Checklist curation")
st.caption(
    f"For each rubric, select {limits.minimum} to {limits.maximum} entries that help judge a response to this task."
)
states = {t.task: t for t in record_store.task_checklists(ws)}
drafted = {t.id for t in task_store.tasks(ws) if draft_store.drafted_candidates(ws, t.id)}
curate = [t for t in sorted(drafted) if states[t].curation is None and (states[t].crosscheck is None)]
crosscheck = [
    t for t, s in sorted(states.items())
    if s.curation is not None and s.crosscheck is None and s.curation.curator != user.name
]  # fmt: skip
stage = st.radio("Stage", ["checklist_curation", "checklist_crosscheck"], horizontal=True,
                 format_func=lambda s: "Curate" if s == "checklist_curation" else "Cross-check (blind)")  # fmt: skip
guidelines_panel(stage)
picked = queue_picker(f"judge-{stage}", curate if stage == "checklist_curation" else crosscheck, noun="task")
if picked is None:
    st.stop()
# what the previous run showed of the task and its candidates: what a Submit in this run was made on
seen = remember_shown(
    f"judge-cl-shown:{stage}:{picked}", record_store.selection_seen(ws, picked, stage), f"Task {picked}"
)
task = task_store.task(ws, picked)
show_task(ws, task)
curating = stage == "checklist_curation"
candidates = draft_store.drafted_candidates(ws, picked) if curating else states[picked].curation.candidates  # type: ignore[union-attr]
candidates, hidden = shown_per_rubric(candidates, ws.settings.judge.draft_shown)
selected: list[str] = []
edits: list[dict[str, str]] = []
added: list[dict[str, str]] = []
with st.container(border=True):  # no form: ticking an entry opens its rewrite box at once
    for rubric in RUBRICS:
        entries = [e for e in candidates if e.rubric == rubric]
        if not entries:
            continue
        st.markdown(f"**{rubric.capitalize()}**")
        before = len(selected)
        for entry in entries:
            if st.checkbox(label_text(entry.text), key=f"judge-cl-{stage}-{picked}-{entry.id}"):
                selected.append(entry.id)
                if curating:
                    text = st.text_input(
                        "Rewrite (optional)", value=entry.text, key=f"judge-cl-edit-{picked}-{entry.id}"
                    )
                    if text.strip() and text.strip() != entry.text:
                        edits.append({"entry": entry.id, "text": text})
        st.caption(f"{rubric}: {len(selected) - before} of {len(entries)} selected")
        if hidden.get(rubric):
            st.caption(
                f"{hidden[rubric]} more drafted {rubric} entries are not shown ([judge] draft_shown); "
                f"`curate judge checklist show {picked} --all` lists them"
            )
    if curating:
        st.markdown("**Add an entry (optional)**")
        rubric = st.selectbox("Rubric", RUBRICS, index=None, key=f"judge-cl-add-rubric-{picked}")
        text = st.text_input("Question", key=f"judge-cl-add-text-{picked}")
        if rubric and text.strip():
            added.append({"rubric": rubric, "text": text})
    submitted = st.button("Submit", type="primary", key=f"judge-cl-submit-{stage}-{picked}")
if submitted:
    try:
        record = ChecklistSelectionRecord(
            task=picked, stage=stage, reviewer=user.name, selected=selected, edits=edits, added=added
        )
        result = record_store.record_selection(ws, record, seen=seen)
        flash(f"Recorded your {'curation' if curating else 'cross-check'} of {picked} ({result.state}).")
        st.rerun()
    except CurateError as exc:
        show_refusal(exc)
