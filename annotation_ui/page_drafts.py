"""The draft of a review page's typed input (``curation.drafts``): per person, page and subject, restored into the
page's widgets when the subject is drawn in a tab that does not hold them (a first visit, a reload, a new session
after signing in, a return from another entry of the queue), kept on the server by the widgets' ``on_change``
callbacks as the person types, and discarded when the review is recorded (``record_review(..., draft=...)``).

A draft holds only the fields the person changed from the page's starting value (a page with nothing typed keeps
no draft), and what the page showed when they typed (``seen``: the item's revision, or the group's content), so a
draft restored onto changed content says so. It holds nothing else: on the blind answer check, only the person's
own choice and note, never the label.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from curation.drafts import discard_draft, load_draft, save_draft
from curation.workspace import Workspace

SEEN = "seen"
"""The payload field that holds what the page showed when the draft was typed."""


def _anything(_value: Any) -> bool:
    return True


def is_text(value: Any) -> bool:
    return isinstance(value, str)


@dataclass(frozen=True)
class Field:
    """One widget of a page's draft: its session key, its starting value, and what a restored value must be."""

    key: str
    default: Any = None
    valid: Callable[[Any], bool] = _anything


@dataclass(frozen=True)
class PageDraft:
    """PERSON's draft of PAGE for SUBJECT, over FIELDS (the payload's names -> the widgets they fill)."""

    ws: Workspace
    person: str
    page: str
    subject: str
    fields: Mapping[str, Field]
    seen: Any = None
    what: str = "input"
    """What the restored message calls the draft ("verdict", "answer")."""

    @property
    def target(self) -> tuple[str, str]:
        """``(page, subject)``, as ``record_review(..., draft=...)`` takes it."""
        return self.page, self.subject

    @property
    def notice_key(self) -> str:
        """The session key of the "draft restored" notice (absent: no notice; a text: also that warning)."""
        return f"draft-restored:{self.page}:{self.subject}"

    @property
    def restored_key(self) -> str:
        """The session key of the values the draft restored, held until the person changes their input."""
        return f"draft-values:{self.page}:{self.subject}"

    @property
    def keys(self) -> tuple[str, ...]:
        """The widgets' session keys, the notice's and the restored values' (what a page forgets once the review
        is recorded)."""
        return (*(f.key for f in self.fields.values()), self.notice_key, self.restored_key)

    def restore(self) -> bool:
        """Fill every widget of the draft that this tab does not hold: the draft's value where it holds a valid
        one, else the starting value. Call it before the widgets are drawn; True when a draft was restored now.

        When anything came from the draft, the page says so (and that the content changed since, when the draft
        was typed against other content) until the person changes their input: a run that follows at once (the
        app's first run lands on a review page, a rerun) does not swallow the notice. Until then every run also
        hands the restored values to the widgets again, so the browser draws them even when it mounts a widget
        from a later run than the restoring one (seen under load: a click right after a reload drew the restored
        choice empty under the notice, while the server held it)."""
        missing = {name: f for name, f in self.fields.items() if f.key not in st.session_state}
        restored = False
        again = st.session_state.get(self.restored_key)
        if isinstance(again, dict) and self.notice_key in st.session_state:
            for name, value in again.items():
                st.session_state[self.fields[name].key] = value
        elif missing:
            draft = load_draft(self.ws, self.person, self.page, self.subject) or {}
            for name, f in missing.items():
                value = draft.get(name, f.default)
                if name in draft and f.valid(value):
                    restored = restored or value != f.default
                else:
                    value = f.default
                st.session_state[f.key] = value
            if restored:
                before = draft.get(SEEN)
                changed = before is not None and self.seen is not None and before != self.seen
                name = self.subject.replace("group:", "group ", 1).removeprefix("item:")
                warning = f"{name} changed since you typed this draft: check it against what is shown now"
                st.session_state[self.notice_key] = f"{warning} before you submit." if changed else ""
                st.session_state[self.restored_key] = {name: st.session_state[f.key] for name, f in missing.items()}
        notice = st.session_state.get(self.notice_key)
        slot = st.container()  # on every run: when the notice goes, what follows keeps its place (no stale copies)
        if notice is not None:
            slot.info(f"Your draft of this {self.what} was restored.", icon=":material/restore:")
            if notice:
                slot.warning(notice, icon=":material/update:")
        return restored

    def values(self) -> dict[str, Any]:
        """The fields as the tab holds them now (a field it does not hold counts as its starting value)."""
        return {name: st.session_state.get(f.key, f.default) for name, f in self.fields.items()}

    def keep(self) -> None:
        """Copy what the person changed to the server (an ``on_change`` callback); nothing changed: no draft."""
        st.session_state.pop(self.notice_key, None)  # the person acted on what was restored
        st.session_state.pop(self.restored_key, None)
        changed = {name: value for name, value in self.values().items() if value != self.fields[name].default}
        if not changed:
            discard_draft(self.ws, self.person, self.page, self.subject)
            return
        save_draft(self.ws, self.person, self.page, self.subject, {**changed, SEEN: self.seen})

    def discard(self) -> None:
        discard_draft(self.ws, self.person, self.page, self.subject)


def one_of(choices: list[Any] | tuple[Any, ...] | Mapping[Any, Any]) -> Callable[[Any], bool]:
    """A restored value must still be one of CHOICES (an option renamed or removed since is not restored)."""
    allowed = list(choices)
    return lambda value: value in allowed


def int_between(low: int, high: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


VERDICTS = ("pass", "fail")


def verdict_fields(key: str) -> dict[str, Field]:
    """The widgets of ``components.verdict_form(key, ...)``: its verdict and its note."""
    return {"verdict": Field(f"{key}-verdict", None, one_of(VERDICTS)), "note": Field(f"{key}-note", "", is_text)}
