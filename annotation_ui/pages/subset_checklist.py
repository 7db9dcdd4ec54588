"""Subset checklist (TRIAD §4.3): one view at a time, only that view's modalities, every view before submitting.

A view counts as answered only when it has a tick or an explicit "No option fits this view": a view that
was merely visited is not answered.

Hidden modalities are replaced by the placeholders the probe checker uses, and their media are not
sent at all. Every tick is copied into the session the moment it is made: a checkbox's own state exists only
while it is drawn, and Streamlit drops it after any run that did not draw it, so it never holds an answer alone.
"""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import label_text, record_review, review_queue, show_audio, show_image, show_text
from annotation_ui.logic import checklist_view
from annotation_ui.shortcuts import NEXT, PREVIOUS, SUBMIT, keys_help, number_keys
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
NONE = "none-fits"
"""The pseudo-option of "No option fits this view", kept among a view's ticks."""
answers_key, position_key = f"cl-answers-{item_id}", f"cl-position-{item_id}"
ticks_key, drawn_key, nones_key = f"cl-ticks-{item_id}", f"cl-drawn-{item_id}", f"cl-none-{item_id}"
answers: dict[str, list[str]] = st.session_state.setdefault(answers_key, {})
ticks: dict[str, list[str]] = st.session_state.setdefault(ticks_key, {})
drawn: set[str] = st.session_state.setdefault(drawn_key, set())
nones: set[str] = st.session_state.setdefault(nones_key, set())
position = st.session_state.setdefault(position_key, 0)
view = VIEWS[position]


def box_key(item_id: str, view: str, key: str) -> str:
    return f"cl-{item_id}-{view}-{key}"


def tick(item_id: str, view: str, key: str) -> None:
    """Copy one checkbox's new state into the session's ticks of its view."""
    chosen = st.session_state[f"cl-ticks-{item_id}"].setdefault(view, [])
    if st.session_state.get(box_key(item_id, view, key)):
        if key not in chosen:
            chosen.append(key)
    elif key in chosen:
        chosen.remove(key)


def keep_ticks(item_id: str, options: list[str]) -> None:
    """Record the view now shown with its ticks (and whether "no option fits" is ticked).

    Callbacks read the position from the session, not from the run that drew the button: a click that
    interrupts a rerun must act on the view the person sees. A view whose boxes were never drawn is
    not stored (it has not been answered).
    """
    shown = VIEWS[st.session_state[f"cl-position-{item_id}"]]
    if shown in st.session_state[f"cl-drawn-{item_id}"]:
        chosen = set(st.session_state[f"cl-ticks-{item_id}"].get(shown, []))
        st.session_state[f"cl-answers-{item_id}"][shown] = [key for key in options if key in chosen]
        view_nones = st.session_state[f"cl-none-{item_id}"]
        if NONE in chosen:
            view_nones.add(shown)
        else:
            view_nones.discard(shown)


def answered(view: str) -> bool:
    """A tick, or "no option fits" with no tick (both at once is a contradiction, not an answer)."""
    return bool(answers.get(view)) != (view in nones)


def move(item_id: str, options: list[str], step: int) -> None:
    keep_ticks(item_id, options)
    current = st.session_state[f"cl-position-{item_id}"]
    st.session_state[f"cl-position-{item_id}"] = min(max(0, current + step), len(VIEWS) - 1)


done = sum(answered(v) for v in VIEWS)
st.progress(done / len(VIEWS), text=f"{done} of {len(VIEWS)} views answered")
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
            show_text("Context", content.context)
        elif "text" in content.placeholders:
            st.info(content.placeholders["text"])
        if content.audio is not None:
            show_audio(ws, content.audio)
        elif "audio" in content.placeholders:
            st.info(content.placeholders["audio"])
    show_text("Question", content.question)
    for key, text in [*content.options.items(), (NONE, None)]:
        st.checkbox(
            label_text(f"{key}. {text}") if text is not None else "No option fits this view",
            value=key in ticks.get(view, []),
            key=box_key(item_id, view, key),
            on_change=tick,
            args=(item_id, view, key),
        )
    drawn.add(view)
    ticked_here = [key for key in content.options if key in ticks.get(view, [])]
    none_here = NONE in ticks.get(view, [])
    if ticked_here and none_here:
        st.error("You ticked options and “No option fits this view”: untick one of them.")

back, forward, _ = st.columns([1, 1, 3])
options = list(item.options)
back.button("Previous view", on_click=move, args=(item_id, options, -1), disabled=position == 0, shortcut=PREVIOUS)
forward.button(
    "Next view", on_click=move, args=(item_id, options, 1), disabled=position == len(VIEWS) - 1, shortcut=NEXT
)
number_keys("checklist", "checkbox")
keys_help(
    (f"1–{len(content.options) + 1}", "tick an option (the last: no option fits)"),
    (f"{PREVIOUS} / {NEXT}", "previous / next view"),
    (SUBMIT, "submit once every view is answered"),
)
here_answered = bool(ticked_here) != none_here
ready = here_answered and all(answered(v) for v in VIEWS if v != view)
note = st.text_area("Note", key=f"cl-note-{item_id}", placeholder="Anything the author should know")
if st.button(
    "Submit checklist",
    type="primary",
    disabled=not ready,
    on_click=keep_ticks,
    args=(item_id, options),
    shortcut=SUBMIT,
):
    record = {
        "item": item_id,
        "stage": "subset_checklist",
        "reviewer": user.name,
        "consistent": {v: answers.get(v, []) for v in VIEWS},
        "note": note,
    }
    record_review(
        ws,
        record,
        f"Recorded your checklist for {item_id}.",
        forget=(answers_key, position_key, ticks_key, drawn_key, nones_key),
    )
if not ready:
    missing = [v for v in VIEWS if not (here_answered if v == view else answered(v))]
    st.caption(
        "Submit opens once every view has a tick or “No option fits this view”. Still open: " + ", ".join(missing)
    )
