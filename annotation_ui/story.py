"""What the story pages share: the two pages side by side (the revisable fields are the domain's,
``curation.screening.revise.revisable_fields``)."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import show_image
from curation.screening.schema import StoryTransition
from curation.workspace import Workspace


def show_pages(ws: Workspace, transition: StoryTransition) -> None:
    """Current page and next page (the reference), narration shown as the characters it has (never Markdown)."""
    left, right = st.columns(2)
    with left, st.container(border=True):
        st.subheader("Current page")
        show_image(ws, transition.current.image)
        st.text(transition.current.text)
    with right, st.container(border=True):
        st.subheader("Next page (reference)")
        show_image(ws, transition.next.image)
        st.text(transition.next.text)
    st.caption(f"{transition.title} · {transition.source.collection} · {transition.source.license}")
