"""Query screening and refinement (Judge Anything §2.1): keep a candidate query, or drop it as NSFW, low
quality or out of scope; a reworded instruction becomes a revision with who and why. A model's suggestion,
where one was made (`curate judge queries prescreen`), is shown and never decides."""

from __future__ import annotations

import streamlit as st
from pydantic import ValidationError

from annotation_ui.components import current_user, flash, queue_picker, show_error, workspace
from annotation_ui.judge_ui import require_annotator, show_medium
from curation.errors import CurateError
from curation.kinds.judge.queries import (
    SCREEN_REASONS,
    QueryRefineRecord,
    QueryScreenRecord,
    queries,
    query_statuses,
    record_query,
)
from curation.kinds.judge.query_prescreen import suggestions

user = require_annotator(current_user())
ws = workspace()
st.title("Query screening")
st.caption("Keep each candidate query, or drop it with a reason; reword it if needed, saying why.")
waiting = [s.id for s in query_statuses(ws) if s.state == "screen"]
picked = queue_picker("judge-queries", waiting, noun="query")
if picked is None:
    st.stop()
query = next(q for q in queries(ws) if q.id == picked)
st.caption(f"Query {query.id} · from {query.source} · wants {query.output}")
st.text(query.instruction)
for modality, sha in sorted(query.inputs.items()):
    st.caption(f"Input {modality}")
    show_medium(ws, modality, sha)
suggested = suggestions(ws).get(picked)
if suggested:
    st.caption(f"A model suggests: {suggested} (it does not decide)")
with st.form(f"judge-query-{picked}"):
    decision = st.radio("Decision", ["keep", "drop"], index=None, horizontal=True, key=f"judge-query-decision-{picked}")
    reason = st.selectbox("Reason (when dropped)", SCREEN_REASONS, index=None, key=f"judge-query-reason-{picked}")
    instruction = st.text_area(
        "Instruction (reword to refine)", value=query.instruction, key=f"judge-query-instruction-{picked}"
    )
    why = st.text_input("Why reworded (needed when you change it)", key=f"judge-query-why-{picked}")
    submitted = st.form_submit_button("Submit", type="primary")
if submitted:
    if decision is None:
        st.error("Choose keep or drop.")
    else:
        try:
            records: list[QueryScreenRecord | QueryRefineRecord] = []
            if instruction.strip() != query.instruction.strip():
                records.append(QueryRefineRecord(query=picked, reviewer=user.name, instruction=instruction, why=why))
            records.append(QueryScreenRecord(query=picked, reviewer=user.name, decision=decision, reason=reason))
            record_query(ws, *records)
            flash(f"Recorded your screening of {picked}.")
            st.rerun()
        except CurateError as exc:
            show_error(exc)
        except ValidationError as exc:  # the record's own rules (a reason when dropped, a why when reworded)
            st.error("; ".join(f"{e['loc'][0] if e['loc'] else 'record'}: {e['msg'].removeprefix('Value error, ')}"
                               for e in exc.errors()))  # fmt: skip
