"""Subset checklist (TRIAD §4.3): one view at a time, only that view's modalities, all 7 before submitting.

Hidden modalities are replaced by the placeholders the probe checker uses, and their media are not
sent at all. Ticks are kept per view in the session, since a view's checkboxes exist only while shown.
"""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import record_review, review_queue, show_audio, show_image
from annotation_ui.logic import checklist_view
from curation.vocab import checklist_views_of

user, ws, snap, item_id = review_queue(
    "Subset checklist",
    "For each view, tick every option that is still consistent with what this view shows. "
    "Judge only what you see and hear here; forget the other views.",
    "checklist",
    "subset_checklist",
)
item = snap.facts[item_id]
VIEWS = checklist_views_of(item.modalities)  # all 7 for a TRIAD item; 3 for one over two modalities
answers_key, position_key = f"cl-answers-{item_id}", f"cl-position-{item_id}"
answers: dict[str, list[str]] = st.session_state.setdefault(answers_key, {})
position = st.session_state.setdefault(position_key, 0)
view = VIEWS[position]


def box_key(item_id: str, view: str, key: str) -> str:
    return f"cl-{item_id}-{view}-{key}"


def keep_ticks(item_id: str, options: list[str]) -> None:
    """Store the ticks of the view now shown, before its checkboxes disappear.

    Callbacks read the position from the session, not from the run that drew the button: a click that
    interrupts a rerun must act on the view the person sees. A view whose boxes were never drawn is
    not stored (it has not been answered).
    """
    shown = VIEWS[st.session_state[f"cl-position-{item_id}"]]
    keys = [box_key(item_id, shown, key) for key in options]
    if any(k in st.session_state for k in keys):
        ticked = [key for key, k in zip(options, keys, strict=True) if st.session_state.get(k)]
        st.session_state[f"cl-answers-{item_id}"][shown] = ticked


def move(item_id: str, options: list[str], step: int) -> None:
    keep_ticks(item_id, options)
    current = st.session_state[f"cl-position-{item_id}"]
    st.session_state[f"cl-position-{item_id}"] = min(max(0, current + step), len(VIEWS) - 1)


st.progress(len(answers) / len(VIEWS), text=f"{len(answers)} of {len(VIEWS)} views answered")
st.subheader(f"View {position + 1} of {len(VIEWS)}: {view}")
content = checklist_view(item, view)
with st.container(border=True):
    left, right = st.columns(2)
    with left:
        if content.image is not None:
            show_image(ws, content.image)
        elif "image" in content.placeholders:
            st.info(content.placeholders["image"])
    with right:
        if content.context is not None:
            st.markdown(f"**Context**\n\n{content.context}")
        elif "text" in content.placeholders:
            st.info(content.placeholders["text"])
        if content.audio is not None:
            show_audio(ws, content.audio)
        elif "audio" in content.placeholders:
            st.info(content.placeholders["audio"])
    st.markdown(f"**{content.question}**")
    for key, text in content.options.items():
        st.checkbox(f"{key}. {text}", value=key in answers.get(view, []), key=box_key(item_id, view, key))

back, forward, _ = st.columns([1, 1, 3])
options = list(item.options)
back.button("Previous view", on_click=move, args=(item_id, options, -1), disabled=position == 0)
forward.button("Next view", on_click=move, args=(item_id, options, 1), disabled=position == len(VIEWS) - 1)
ready = len(set(answers) | {view}) == len(VIEWS)
note = st.text_area("Note", key=f"cl-note-{item_id}", placeholder="Anything the author should know")
if st.button("Submit checklist", type="primary", disabled=not ready, on_click=keep_ticks, args=(item_id, options)):
    record = {
        "item": item_id,
        "stage": "subset_checklist",
        "reviewer": user.name,
        "consistent": {v: answers.get(v, []) for v in VIEWS},
        "note": note,
    }
    record_review(ws, record, f"Recorded your checklist for {item_id}.", forget=(answers_key, position_key))
if not ready:
    st.caption(f"Submit opens once you have answered all {len(VIEWS)} views.")
