"""Score annotation (Judge Anything): overall and per-rubric 1–5 scores, the checklist beside the response."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import current_user, workspace
from annotation_ui.judge_annotation import annotation_page
from annotation_ui.judge_ui import require_annotator

user = require_annotator(current_user())
st.title("Score annotation")
st.caption("Score the response 1 (worst) to 5 (best), overall and on each rubric. Every choice is kept "
           "as your draft until you apply it; Apply saves and moves on.")  # fmt: skip
annotation_page(workspace(), user, "score")
