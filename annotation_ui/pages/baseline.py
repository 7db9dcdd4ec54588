"""Human baseline (TRIAD §5.1, Table 7): a rater answers the items assigned to them, open-ended first (no options
shown), then Standard (the options, never the label); a grader marks other people's open-ended answers, after
being told the page shows the labels (grading exposes them, like any page that reveals a label). A typed answer
is kept as the rater's draft until submitted (``annotation_ui.page_drafts``): a reload resumes it."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import flash, guarded, require, show_audio, show_image, show_text, workspace
from annotation_ui.page_drafts import Field, PageDraft, is_text, one_of
from curation.baseline.campaign import (
    campaigns,
    campaigns_of_rater,
    rater_queue,
    record_answer,
    record_grade,
    reveal_for_grading,
    ungraded,
)

user = require("reviewer")
ws = workspace()
st.title("Human baseline")
with guarded("baseline page"):
    mode = st.radio("Task", ["Answer", "Grade open-ended answers"], key="baseline-mode", horizontal=True)
    if mode == "Answer":
        mine = campaigns_of_rater(ws, user.name)
        if not mine:
            st.info("No baseline campaign asks you anything (a maintainer assigns raters: curate baseline create).")
            st.stop()
        campaign = st.selectbox("Campaign", mine, key="baseline-campaign")
        assert campaign is not None
        todo = rater_queue(ws, campaign, user.name)
        if not todo:
            st.success("You have answered every item of this campaign. Thank you.")
            st.stop()
        item_id, form = todo[0]
        st.caption(f"{len(todo)} answer(s) left. Answer as you understand the item; there is no going back.")
        item = ws.item(item_id)
        if item.image:
            show_image(ws, item.image)
        if item.audio:
            show_audio(ws, item.audio)
        if item.context:
            show_text("Context", item.context)
        show_text("Question", item.question)
        widget = f"baseline-{item_id}-{form}"
        field = Field(widget, "", is_text) if form == "open" else Field(widget, None, one_of(item.options))
        draft = PageDraft(
            ws, user.name, f"baseline:{campaign}:{form}", f"item:{item_id}", {"answer": field}, what="answer"
        )
        draft.restore()
        if form == "open":
            st.markdown("**Your answer, in your own words** (the options come next)")
            answer = st.text_area("Answer", key=widget, label_visibility="collapsed", on_change=draft.keep)
        else:
            picked = st.radio(
                "Options",
                list(item.options),
                format_func=lambda key: f"{key}. {item.options[key]}",
                key=widget,
                on_change=draft.keep,
            )
            answer = picked or ""
        if st.button("Submit", type="primary", key=f"{widget}-submit", disabled=not answer.strip()):
            record_answer(ws, campaign, item_id, user.name, form, answer)
            draft.discard()
            for key in draft.keys:
                st.session_state.pop(key, None)
            flash(f"Recorded your {'open-ended' if form == 'open' else 'Standard'} answer to {item_id}.")
            st.rerun()
    else:
        names = [c.name for c in campaigns(ws)]
        if not names:
            st.info("This workspace has no baseline campaign yet.")
            st.stop()
        campaign = st.selectbox("Campaign", names, key="baseline-grade-campaign")
        assert campaign is not None
        st.warning("Grading shows each item's answer key: you will count as having seen these labels.")
        if not st.checkbox("Show me the answers to grade", key="baseline-grade-reveal"):
            st.stop()
        waiting = ungraded(ws, campaign, user.name)
        if not waiting:
            st.success("No open-ended answer waits for your grade.")
            st.stop()
        answer_row = waiting[0]
        item = ws.item(answer_row.item_id)
        reveal_for_grading(ws, user.name, campaign, item.id)
        st.caption(f"{len(waiting)} answer(s) to grade.")
        show_text("Question", item.question)
        show_text("Reference answer", item.options[item.answer])
        show_text("The rater's answer", answer_row.answer)
        left, right = st.columns(2)
        for column, correct, label in ((left, True, "Correct"), (right, False, "Incorrect")):
            if column.button(label, key=f"baseline-grade-{answer_row.id}-{label}"):
                record_grade(ws, answer_row.id or 0, user.name, correct)
                flash(f"Recorded your grade of an answer to {item.id}.")
                st.rerun()
