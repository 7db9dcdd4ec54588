"""Pair annotation (Judge Anything): first, second or tie, overall and per rubric."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import current_user, workspace
from annotation_ui.judge_ui import annotation_page, require_annotator

user = require_annotator(current_user())
st.title("Pair annotation")
st.caption("Which response is better: first, second, or a tie? Overall and on each rubric. Apply saves and "
           "moves on; Previous and Next keep what you entered as a draft.")  # fmt: skip
annotation_page(workspace(), user, "pair")
