"""Subset checklist (TRIAD §4.3): one view at a time, only that view's modalities, every view before submitting.

A view counts as answered only when it has a tick or an explicit "No option fits this view": a view that
was merely visited is not answered. After the views, each exclusion rule of the workspace (``[review]
exclusion_rules``) is asked as its sentence with a pass/fail choice and no default (``annotation_ui.exclusion_form``);
Submit opens once every view and every rule is answered, and the answers are the record's ``exclusions``.

Hidden modalities are replaced by the placeholders the probe checker uses, and their media are not
sent at all; the author's notes (``curation.notes``) are shown as reference only beside the modality they
describe. Every tick is copied into the session the moment it is made: a checkbox's own state exists only
while it is drawn, and Streamlit drops it after any run that did not draw it, so it never holds an answer alone.
The ticks, the view on screen, the note and the rules' answers are kept as the person's draft on the server (a
reload resumes them), and the progress counts the view on screen as soon as it is answered.
"""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import label_text, record_review, review_queue, show_audio, show_image, show_text
from annotation_ui.exclusion_form import CHOICE_LABELS, HEADING, HELP, record_field, restored, unanswered, widget_key
from annotation_ui.logic import checklist_view
from annotation_ui.shortcuts import NEXT, PREVIOUS, SUBMIT, keys_help, number_keys
from curation.drafts import load_draft, save_draft
from curation.notes import NOTE_LABELS
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
PAGE = "subset_checklist"
position_key, ticks_key, note_key = f"cl-position-{item_id}", f"cl-ticks-{item_id}", f"cl-note-{item_id}"
RULES = ws.settings.review.exclusion_rules  # asked once per item, after the views
exclusions_key = f"cl-exclusions-{item_id}"
restored_notice = st.empty()  # drawn on every run, so the elements below keep their places when it is empty
if ticks_key not in st.session_state:  # first draw of this item in this tab: resume the person's draft
    draft = load_draft(ws, user.name, PAGE, f"item:{item_id}") or {}
    kept = draft.get("ticks") or {}
    st.session_state[ticks_key] = {v: [k for k in kept.get(v, []) if k in item.options or k == NONE] for v in VIEWS}
    st.session_state[position_key] = min(max(0, int(draft.get("position", 0))), len(VIEWS) - 1)
    st.session_state[note_key] = str(draft.get("note", ""))
    st.session_state[exclusions_key] = restored(draft.get("exclusions"), RULES)
    if draft:
        restored_notice.info("Your draft of this checklist was restored.", icon=":material/restore:")
ticks: dict[str, list[str]] = st.session_state[ticks_key]
position = st.session_state[position_key]
view = VIEWS[position]


def box_key(item_id: str, view: str, key: str) -> str:
    return f"cl-{item_id}-{view}-{key}"


def keep_draft(item_id: str) -> None:
    """Copy the ticks, the view on screen and the note to the server: a reload resumes them."""
    save_draft(
        ws,
        user.name,
        PAGE,
        f"item:{item_id}",
        {
            "ticks": st.session_state[f"cl-ticks-{item_id}"],
            "position": st.session_state[f"cl-position-{item_id}"],
            "note": st.session_state.get(f"cl-note-{item_id}", ""),
            "exclusions": st.session_state.get(f"cl-exclusions-{item_id}", {}),
        },
    )


def attest(item_id: str, rule: str) -> None:
    """Copy one rule's pass/fail choice into the session's answers and the draft."""
    answers = st.session_state.setdefault(f"cl-exclusions-{item_id}", {})
    chosen = st.session_state.get(widget_key(item_id, rule))
    if chosen is None:
        answers.pop(rule, None)
    else:
        answers[rule] = chosen
    keep_draft(item_id)


def tick(item_id: str, view: str, key: str) -> None:
    """Copy one checkbox's new state into the session's ticks of its view (the view that drew it)."""
    chosen = st.session_state[f"cl-ticks-{item_id}"].setdefault(view, [])
    if st.session_state.get(box_key(item_id, view, key)):
        if key not in chosen:
            chosen.append(key)
    elif key in chosen:
        chosen.remove(key)
    keep_draft(item_id)


def answered(view: str) -> bool:
    """A tick, or "no option fits" with no tick (both at once is a contradiction, not an answer). Ticks exist
    only for views whose boxes were drawn: a view merely visited is not answered."""
    chosen = ticks.get(view, [])
    return any(k in item.options for k in chosen) != (NONE in chosen)


def move(item_id: str, step: int) -> None:
    """Callbacks read the position from the session, not from the run that drew the button: a click that
    interrupts a rerun must act on the view the person sees."""
    current = st.session_state[f"cl-position-{item_id}"]
    st.session_state[f"cl-position-{item_id}"] = min(max(0, current + step), len(VIEWS) - 1)
    keep_draft(item_id)


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
    for modality, note in content.notes.items():  # reference, and only beside the modality it describes
        show_text(f"{NOTE_LABELS[modality]} (the author's description, for reference)", note)
    show_text("Question", content.question)
    drawn = {
        key: st.checkbox(
            label_text(f"{key}. {text}") if text is not None else "No option fits this view",
            value=key in ticks.get(view, []),
            key=box_key(item_id, view, key),
            on_change=tick,
            args=(item_id, view, key),
        )
        for key, text in [*content.options.items(), (NONE, None)]
    }
    if {k for k, on in drawn.items() if on} != set(ticks.get(view, [])):
        # what the boxes on screen show is the answer: a click whose rerun another click interrupted can leave
        # its box ticked on screen without its callback having run, and that tick must not go missing
        ticks[view] = [k for k, on in drawn.items() if on]
        keep_draft(item_id)
        st.rerun()
    ticked_here = [key for key in content.options if key in ticks.get(view, [])]
    none_here = NONE in ticks.get(view, [])
    if ticked_here and none_here:
        st.error("You ticked options and “No option fits this view”: untick one of them.")

back, forward, _ = st.columns([1, 1, 3])
back.button("Previous view", on_click=move, args=(item_id, -1), disabled=position == 0, shortcut=PREVIOUS)
forward.button("Next view", on_click=move, args=(item_id, 1), disabled=position == len(VIEWS) - 1, shortcut=NEXT)
number_keys("checklist", "checkbox")
keys_help(
    (f"1–{len(content.options) + 1}", "tick an option (the last: no option fits)"),
    (f"{PREVIOUS} / {NEXT}", "previous / next view"),
    (SUBMIT, "submit once every view is answered"),
)
answers: dict[str, str] = st.session_state.setdefault(exclusions_key, {})
if RULES:
    st.subheader(HEADING)
    st.caption(HELP)
    for rule, sentence in RULES.items():
        st.radio(
            label_text(f"{rule}: {sentence}"),
            list(CHOICE_LABELS),
            index=list(CHOICE_LABELS).index(answers[rule]) if rule in answers else None,
            format_func=CHOICE_LABELS.__getitem__,
            key=widget_key(item_id, rule),
            on_change=attest,
            args=(item_id, rule),
        )
open_rules = unanswered(answers, RULES)
ready = all(answered(v) for v in VIEWS) and not open_rules
note = st.text_area(
    "Note", key=note_key, placeholder="Anything the author should know", on_change=keep_draft, args=(item_id,)
)
if st.button("Submit checklist", type="primary", disabled=not ready, shortcut=SUBMIT):
    record = {
        "item": item_id,
        "stage": "subset_checklist",
        "reviewer": user.name,
        "consistent": {v: [k for k in item.options if k in ticks.get(v, [])] for v in VIEWS},
        "note": note,
        **record_field(answers, RULES),
    }
    record_review(
        ws,
        record,
        f"Recorded your checklist for {item_id}.",
        forget=(position_key, ticks_key, note_key, exclusions_key, *(widget_key(item_id, r) for r in RULES)),
        draft=(PAGE, f"item:{item_id}"),
    )
if not ready:
    missing = [v for v in VIEWS if not answered(v)] + [f"exclusion rule {rule}" for rule in open_rules]
    st.caption(
        "Submit opens once every view has a tick or “No option fits this view”"
        + (" and every exclusion rule is answered" if RULES else "")
        + ". Still open: "
        + ", ".join(missing)
    )
