"""Score annotation (Judge Anything): overall and per-rubric 1–5 scores, the checklist beside the response."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import current_user, workspace
from annotation_ui.judge_ui import annotation_page, require_annotator

user = require_annotator(current_user())
st.title("Score annotation")
st.caption("Score the response 1 (worst) to 5 (best), overall and on each rubric. Apply saves and moves on; "
           "Previous and Next keep what you entered as a draft.")  # fmt: skip
annotation_page(workspace(), user, "score")
