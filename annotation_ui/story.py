"""What the story pages share: the two pages side by side, and the annotation fields a reviewer may edit."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import show_image
from curation.screening.schema import EMOTIONS, GENDERS, PITCHES, SPEEDS, StoryTransition
from curation.workspace import Workspace

CHOICES = {"speech.emotion": EMOTIONS, "speech.speed": SPEEDS, "speech.pitch": PITCHES, "speech.gender": GENDERS}


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


def editable_fields(transition: StoryTransition) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Dotted path -> (current value, allowed values or empty), for the text and choice fields."""
    fields: dict[str, tuple[str, tuple[str, ...]]] = {}
    meta = transition.book_meta
    for name in ("genre", "topic", "style"):
        fields[f"book_meta.{name}"] = (getattr(meta, name), ())
    c = transition.conditions
    for name in ("scene", "text_goal", "ambient_sound"):
        fields[f"conditions.{name}"] = (getattr(c, name), ())
    for i, character in enumerate(c.characters):
        for name in ("emotion", "action", "speech_intent"):
            fields[f"conditions.characters.{i}.{name}"] = (getattr(character, name), ())
    speech = transition.speech
    for name in ("speaker", "utterance", "emotion", "speed", "pitch", "gender"):
        path = f"speech.{name}"
        fields[path] = (getattr(speech, name), tuple(CHOICES.get(path, ())))
    return fields
