"""Subset checklist (TRIAD §4.3): one view at a time, only that view's modalities, all 7 before submitting.

A view counts as answered only when it has a tick or an explicit "No option fits this view": a view that
was merely visited is not answered.

Hidden modalities are replaced by the placeholders the probe checker uses, and their media are not
sent at all. Ticks are kept per view in the session, since a view's checkboxes exist only while shown.
"""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import label_text, record_review, review_queue, show_audio, show_image, show_text
from annotation_ui.logic import checklist_view
from curation.vocab import CHECKLIST_VIEWS

user, ws, snap, item_id = review_queue(
    "Subset checklist",
    "For each view, tick every option that is still consistent with what this view shows. "
    "Judge only what you see and hear here; forget the other views.",
    "checklist",
    "subset_checklist",
)
item = snap.facts[item_id]
answers_key, position_key = f"cl-answers-{item_id}", f"cl-position-{item_id}"
answers: dict[str, list[str]] = st.session_state.setdefault(answers_key, {})
nones_key = f"cl-none-{item_id}"
nones: set[str] = st.session_state.setdefault(nones_key, set())
NONE = "none-fits"
position = st.session_state.setdefault(position_key, 0)
view = CHECKLIST_VIEWS[position]


def box_key(item_id: str, view: str, key: str) -> str:
    return f"cl-{item_id}-{view}-{key}"


def keep_ticks(item_id: str, options: list[str]) -> None:
    """Store the ticks of the view now shown, before its checkboxes disappear.

    Callbacks read the position from the session, not from the run that drew the button: a click that
    interrupts a rerun must act on the view the person sees. A view whose boxes were never drawn is
    not stored (it has not been answered).
    """
    shown = CHECKLIST_VIEWS[st.session_state[f"cl-position-{item_id}"]]
    keys = [box_key(item_id, shown, key) for key in options]
    if any(k in st.session_state for k in keys):
        ticked = [key for key, k in zip(options, keys, strict=True) if st.session_state.get(k)]
        st.session_state[f"cl-answers-{item_id}"][shown] = ticked
        nones = st.session_state[f"cl-none-{item_id}"]
        if st.session_state.get(box_key(item_id, shown, NONE)):
            nones.add(shown)
        else:
            nones.discard(shown)


def answered(view: str) -> bool:
    """A tick, or "no option fits" with no tick (both at once is a contradiction, not an answer)."""
    ticked = bool(answers.get(view))
    return ticked != (view in nones)


def move(item_id: str, options: list[str], step: int) -> None:
    keep_ticks(item_id, options)
    current = st.session_state[f"cl-position-{item_id}"]
    st.session_state[f"cl-position-{item_id}"] = min(max(0, current + step), len(CHECKLIST_VIEWS) - 1)


done = sum(answered(v) for v in CHECKLIST_VIEWS)
st.progress(done / len(CHECKLIST_VIEWS), text=f"{done} of {len(CHECKLIST_VIEWS)} views answered")
st.subheader(f"View {position + 1} of {len(CHECKLIST_VIEWS)}: {view}")
content = checklist_view(item, view)
with st.container(border=True):
    left, right = st.columns(2)
    with left:
        if content.image is not None:
            show_image(ws, content.image)
        else:
            st.info(content.placeholders["image"])
    with right:
        if content.context is not None:
            show_text("Context", content.context)
        else:
            st.info(content.placeholders["text"])
        if content.audio is not None:
            show_audio(ws, content.audio)
        else:
            st.info(content.placeholders["audio"])
    show_text("Question", content.question)
    for key, text in content.options.items():
        st.checkbox(label_text(f"{key}. {text}"), value=key in answers.get(view, []), key=box_key(item_id, view, key))
    st.checkbox("No option fits this view", value=view in nones, key=box_key(item_id, view, NONE))
    ticked_here = [key for key in content.options if st.session_state.get(box_key(item_id, view, key))]
    none_here = bool(st.session_state.get(box_key(item_id, view, NONE)))
    if ticked_here and none_here:
        st.error("You ticked options and “No option fits this view”: untick one of them.")

back, forward, _ = st.columns([1, 1, 3])
options = list(item.options)
back.button("Previous view", on_click=move, args=(item_id, options, -1), disabled=position == 0)
forward.button("Next view", on_click=move, args=(item_id, options, 1), disabled=position == len(CHECKLIST_VIEWS) - 1)
here_answered = bool(ticked_here) != none_here
ready = here_answered and all(answered(v) for v in CHECKLIST_VIEWS if v != view)
note = st.text_area("Note", key=f"cl-note-{item_id}", placeholder="Anything the author should know")
if st.button("Submit checklist", type="primary", disabled=not ready, on_click=keep_ticks, args=(item_id, options)):
    record = {
        "item": item_id,
        "stage": "subset_checklist",
        "reviewer": user.name,
        "consistent": {v: answers.get(v, []) for v in CHECKLIST_VIEWS},
        "note": note,
    }
    record_review(ws, record, f"Recorded your checklist for {item_id}.", forget=(answers_key, position_key, nones_key))
if not ready:
    missing = [v for v in CHECKLIST_VIEWS if not (here_answered if v == view else answered(v))]
    st.caption(
        "Submit opens once every view has a tick or “No option fits this view”. Still open: " + ", ".join(missing)
    )
