"""How a review page says a submission was not recorded, and a Submit button that records in its click's callback.

A record made inside a page's run has to redraw the page afterwards (``st.rerun``) to move the queue on: the click
costs two runs of the whole page. Recorded in the button's ``on_click`` callback instead, before the run the click
starts, the one run that follows confirms and draws the next entry (issue 39: under a team on 2 cores, every run
of the page and every element it sends is time each person waits for).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from curation.errors import CurateError, ValidationFailed
from curation.reviews import NO_LONGER_NEEDED


def error_text(exc: CurateError) -> str:
    """A domain refusal, worded for the person: every problem of a ValidationFailed, one line each."""
    if isinstance(exc, ValidationFailed):
        return "\n".join(f"- **{p.field}**: {p.message}" if p.field else f"- {p.message}" for p in exc.problems)
    return str(exc)


@dataclass(frozen=True)
class Refusal:
    """Why a submission was not recorded, as the page says it; what the person typed stays on the page."""

    text: str
    icon: str | None = ":material/block:"
    warn: bool = False
    """A warning (the content changed: check it and submit again) rather than an error."""

    def show(self) -> None:
        if self.warn:
            st.warning(self.text, icon=self.icon)
        else:
            st.error(self.text, icon=self.icon)


def refusal_of(exc: CurateError, why_gone: Callable[[], str]) -> Refusal:
    """The domain's refusal of a page's submission: the entry no longer needs the person (someone else's record
    got there first: said as WHY_GONE words it, as the page says it of an entry that left the queue), the
    content changed since the page showed it (``stale:<stage>``), or what the domain said."""
    messages = [p.message for p in getattr(exc, "problems", [])]
    if any(m.startswith(f"{NO_LONGER_NEEDED}:") for m in messages):
        return Refusal(f"Not recorded. {why_gone()}")
    stale = [m for m in messages if m.startswith("stale:")]
    if stale:
        return Refusal(
            f"Not recorded: {stale[0]}. The page now shows the new content and keeps your input: "
            "check it and submit again.",
            ":material/update:",
            warn=True,
        )
    return Refusal(error_text(exc), None)


def submit_button(key: str, submit: Callable[[], Refusal | None], **button: Any) -> None:
    """A primary Submit button whose click runs SUBMIT (which records, or returns why not) in the click's callback,
    before the run it starts; a refusal is shown under the button in that run. BUTTON: ``st.button``'s options."""
    said = f"{key}-refusal"

    def on_click() -> None:
        st.session_state[said] = submit()

    st.button("Submit", type="primary", key=key, on_click=on_click, **button)
    refusal = st.session_state.pop(said, None)
    if isinstance(refusal, Refusal):
        refusal.show()
