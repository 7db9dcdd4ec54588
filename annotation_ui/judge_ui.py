"""Streamlit pieces of the judge_task pages (Judge Anything's annotation app, App. C): the navigation
section, a task with its media, a response, a checklist, what a page showed (the ``seen`` of its save) and a
refused save in the page's words. The score and pair flow is ``annotation_ui.judge_annotation``.

Text that people or models wrote is shown as typed (``st.text``), never rendered as Markdown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

import streamlit as st

from curation.errors import CurateError, ValidationFailed
from curation.kinds.judge.schema import ChecklistEntry
from curation.kinds.judge.tables import JudgeResponse, JudgeSample, JudgeTask
from curation.workspace import Workspace

from .components import show_error, show_flash
from .logic import PageSpec, SignedIn, media_ref

JUDGE_SECTION = "Judging"
JUDGE = frozenset({"judge_task"})
JUDGE_PAGES = [
    PageSpec("pages/judge_queries.py", "Query screening", ":material/filter_alt:", JUDGE),
    PageSpec("pages/judge_checklist.py", "Checklist curation", ":material/fact_check:", JUDGE),
    PageSpec("pages/judge_responses.py", "Response review", ":material/rule:", JUDGE),
    PageSpec("pages/judge_score.py", "Score annotation", ":material/star_rate:", JUDGE),
    PageSpec("pages/judge_pair.py", "Pair annotation", ":material/compare:", JUDGE),
]


def judge_pages_for(user: SignedIn | None, present: Iterable[str] = ("judge_task",)) -> dict[str, list[PageSpec]]:
    """The Judging section, for reviewers and maintainers of a workspace that holds judge tasks."""
    if user is None or not user.roles & {"reviewer", "maintainer"} or not JUDGE & set(present):
        return {}
    return {JUDGE_SECTION: JUDGE_PAGES}


def require_annotator(user: SignedIn | None) -> SignedIn:
    if user is None or not user.roles & {"reviewer", "maintainer"}:
        st.error("This page is for reviewers and maintainers. Sign in first.")
        st.stop()
    show_flash()
    return user


def show_medium(ws: Workspace, modality: str, sha256: str) -> None:
    ref = media_ref(ws, sha256)
    if modality == "image":
        st.image(ref.path)
    elif modality == "audio":
        st.audio(ref.path, format=ref.mime)
    else:
        st.video(ref.path, format=ref.mime)


def sample_name(row: JudgeSample) -> str:
    """What annotators call a sample: its number. Sample ids name the systems judged (``p:t:sys-a~sys-b``)."""
    return f"Sample {row.position + 1}"


def response_names(responses: list[JudgeResponse]) -> dict[str, str]:
    """Response id -> "Task T · response N" (numbered per task in id order): response ids name their system."""
    numbers: dict[str, int] = {}
    names = {}
    for response in sorted(responses, key=lambda r: (r.task, r.id)):
        numbers[response.task] = numbers.get(response.task, 0) + 1
        names[response.id] = f"Task {response.task} · response {numbers[response.task]}"
    return names


def show_task(ws: Workspace, task: JudgeTask) -> None:
    st.caption(f"Task {task.id} · {task.modality_pair} · from {task.source}")
    st.text(task.instruction)
    for modality, sha in sorted(task.inputs.items()):
        st.caption(f"Input {modality}")
        show_medium(ws, modality, sha)


def show_response(ws: Workspace, response: JudgeResponse, label: str) -> None:
    st.subheader(label)
    if response.asset:
        show_medium(ws, response.modality, response.asset)
    else:
        st.text(response.text or "")


def show_checklist(entries: list[ChecklistEntry], criterion: str | None = None) -> None:
    st.subheader("Checklist")
    shown = [e for e in entries if criterion in (None, "overall", e.rubric)]
    if not shown:
        st.caption("No checklist entry for this rubric.")
    for entry in shown:
        st.text(f"[{entry.rubric}] {entry.text}")


def remember_shown(key: str, now: str, what: str) -> str:
    """Keep what this run shows (NOW, a content hash) under KEY for the next run, and return what the previous
    run showed: what a save made in this run was made on (its ``seen``). Says so when the two differ: the person
    is looking at new content (someone else changed it since)."""
    seen = st.session_state.get(key, now)
    st.session_state[key] = now
    if seen != now:
        st.warning(
            f"{what} changed since you opened it: what you see now is the new content. Your input is kept; check it "
            "against the new content before you submit.",
            icon=":material/update:",
        )
    return seen


def show_refusal(exc: CurateError, neutral: Mapping[str, str] | None = None) -> None:
    """A refused save, in the page's words: the ids in NEUTRAL (sample and response ids name the systems judged)
    are replaced by the names the page shows; a ``stale:<stage>`` refusal says the page shows the new content now
    and the input is kept, to check and submit again."""

    def plain(text: str) -> str:
        for ident, name in (neutral or {}).items():
            text = text.replace(ident, name)
        return text

    if not isinstance(exc, ValidationFailed):
        show_error(type(exc)(plain(str(exc))))
        return
    stale = [p.message for p in exc.problems if p.message.startswith("stale:")]
    if stale:
        st.warning(
            f"Not recorded: {plain(stale[0])}. The page now shows the new content and keeps your input: check it and "
            "submit again.",
            icon=":material/update:",
        )
        return
    show_error(ValidationFailed([replace(p, message=plain(p.message)) for p in exc.problems], exc.summary))
