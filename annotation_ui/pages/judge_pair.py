"""Pair annotation (Judge Anything): first, second or tie, overall and per rubric."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import current_user, workspace
from annotation_ui.judge_annotation import annotation_page
from annotation_ui.judge_ui import require_annotator

user = require_annotator(current_user())
st.title("Pair annotation")
st.caption("Which response is better: first, second, or a tie? Overall and on each rubric. Every choice is "
           "kept as your draft until you apply it; Apply saves and moves on.")  # fmt: skip
annotation_page(workspace(), user, "pair")
