"""Response review (Judge Anything §2.3): is each system's response usable as a judging sample? NSFW?"""

from __future__ import annotations

import streamlit as st
from pydantic import ValidationError

from annotation_ui.components import current_user, flash, guidelines_panel, queue_picker, workspace
from annotation_ui.judge_ui import (
    remember_shown,
    require_annotator,
    response_names,
    show_refusal,
    show_response,
    show_task,
)
from curation.errors import CurateError
from curation.kinds.judge import record_store, task_store
from curation.kinds.judge.schema import ResponseReviewRecord

user = require_annotator(current_user())
ws = workspace()
st.title("Response review")
st.caption("Mark each response usable, or unusable with a reason; NSFW content is never usable.")
guidelines_panel("response_review")
reviewed = record_store.response_reviews(ws)
every = task_store.responses(ws)
names = response_names(every)  # response ids name their system: the page shows neutral numbers only
waiting = [r.id for r in every if not reviewed.get(r.id)]
picked = queue_picker("judge-responses", waiting, noun="response", describe=names.__getitem__)
if picked is None:
    st.stop()
response = next(r for r in every if r.id == picked)
# what the previous run showed of the response and its task: what a Submit in this run was made on
seen = remember_shown(f"judge-review-shown:{picked}", record_store.response_seen(ws, picked), names[picked])
show_task(ws, task_store.task(ws, response.task))
show_response(ws, response, names[picked].split(" · ")[-1].capitalize())
with st.form(f"judge-review-{waiting.index(picked)}"):
    usable = st.radio("Usable as a judging sample?", ["usable", "unusable"], index=None, horizontal=True)
    nsfw = st.checkbox("NSFW (not safe for work)")
    reason = st.text_input("Reason (needed when unusable)")
    submitted = st.form_submit_button("Submit", type="primary")
if submitted:
    if usable is None:
        st.error("Choose usable or unusable.")
    else:
        try:
            record_store.record_response_review(
                ws,
                ResponseReviewRecord(
                    response=picked, reviewer=user.name, usable=usable == "usable", reason=reason, nsfw=nsfw
                ),
                seen=seen,
            )
            flash(f"Recorded your review of {names[picked].lower()}.")
            st.rerun()
        except CurateError as exc:
            show_refusal(exc, {f"response {picked}": names[picked], picked: names[picked]})
        except ValidationError as exc:  # the record's own rules (a reason when unusable, NSFW never usable)
            st.error("; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors()))
