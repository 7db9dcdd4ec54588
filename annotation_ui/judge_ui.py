"""Streamlit pieces of the judge_task pages (Judge Anything's annotation app, App. C): the navigation
section, a task with its media, a response, a checklist, and the score/pair annotation flow with Apply,
Previous and Next.

Apply saves the annotation and moves on; Previous and Next keep what was entered as a draft (in the
workspace, so a reload resumes it) without counting it; the queue serves each sample to the configured
number of annotators and never twice to one person (``curation.kinds.judge.sample_store``). Text that people or
models wrote is shown as typed (``st.text``), never rendered as Markdown.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import streamlit as st

from curation.errors import CurateError
from curation.kinds.judge import annotation_store, record_store, sample_store, task_store
from curation.kinds.judge.rubrics import CHOICES, CRITERIA, DEFINITIONS, SCALE
from curation.kinds.judge.schema import ChecklistEntry, PairSample, ScoreSample
from curation.kinds.judge.tables import JudgeResponse, JudgeSample, JudgeTask
from curation.workspace import Workspace

from .components import flash, guidelines_panel, show_error, show_flash
from .logic import PageSpec, SignedIn, media_ref
from .shortcuts import NEXT, PREVIOUS, SUBMIT, keys_help

JUDGE_SECTION = "Judging"
JUDGE = frozenset({"judge_task"})
JUDGE_PAGES = [
    PageSpec("pages/judge_queries.py", "Query screening", ":material/filter_alt:", JUDGE),
    PageSpec("pages/judge_checklist.py", "Checklist curation", ":material/fact_check:", JUDGE),
    PageSpec("pages/judge_responses.py", "Response review", ":material/rule:", JUDGE),
    PageSpec("pages/judge_score.py", "Score annotation", ":material/star_rate:", JUDGE),
    PageSpec("pages/judge_pair.py", "Pair annotation", ":material/compare:", JUDGE),
]
CURRENT = "judge-{kind}-current"


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


def _slot(kind: str, number: int, criterion: str) -> str:
    """A widget key of sample NUMBER: widget keys reach the browser, and sample ids name the systems."""
    return f"judge-{kind}-{number}-{criterion}"


def _values(kind: str, number: int) -> dict[str, Any]:
    out = {}
    for criterion in CRITERIA:
        value = st.session_state.get(_slot(kind, number, criterion))
        if value is not None:
            out[criterion] = value
    return out


def _save_draft(ws: Workspace, user: SignedIn, kind: str, row: JudgeSample) -> None:
    values = _values(kind, row.position)
    if values:
        annotation_store.save_annotation(ws, row.id, user.name, values, apply=False)


def _criterion_inputs(kind: str, number: int, draft: dict[str, Any]) -> None:
    """One horizontal radio per criterion (keyboard: Tab to it, arrows to choose); drafts preselected."""
    options: list[Any] = list(range(1, 6)) if kind == "score" else list(CHOICES)
    for criterion in CRITERIA:
        key = _slot(kind, number, criterion)
        if key not in st.session_state and criterion in draft:
            st.session_state[key] = draft[criterion]
        help_text = DEFINITIONS[criterion]
        if kind == "score":
            help_text += "\n\n" + "\n\n".join(f"{k}: {v}" for k, v in SCALE[criterion].items())
        st.radio(criterion.capitalize(), options, index=None, horizontal=True, key=key, help=help_text)


def annotation_page(ws: Workspace, user: SignedIn, kind: str) -> None:
    """The score or pair page: the current sample, its inputs and the Apply / Previous / Next form."""
    current_key = CURRENT.format(kind=kind)
    guidelines_panel(kind)
    progress = annotation_store.progress(ws, user.name, kind)
    st.caption(
        f"{progress['mine']} applied by you · {progress['complete']} of {progress['samples']} samples have all their "
        f"annotators ({ws.settings.judge.annotators_per_sample} each)"
    )
    sample_id = st.session_state.get(current_key)
    row = None
    if sample_id is not None:
        row = sample_store.sample_row(ws, sample_id)
    else:
        row = sample_store.next_sample(ws, user.name, kind)
        if row is None:
            st.info("Nothing waits for you here: every sample has its annotators or was annotated by you.")
            st.stop()
        st.session_state[current_key] = row.id
    assert row is not None
    mine = annotation_store.annotation(ws, row.id, user.name)
    draft = (mine.payload.get("scores") or mine.payload.get("choices") or {}) if mine else {}
    task = task_store.task(ws, row.task)
    checklist = record_store.task_checklist(ws, task.id).final
    st.markdown(f"**{sample_name(row)}**" + (" · applied by you" if mine and mine.applied else ""))
    show_task(ws, task)
    responses = {r.id: r for r in task_store.responses(ws, task.id)}
    if kind == "score":
        sample = ScoreSample.model_validate(row.payload)
        left, right = st.columns([3, 2])
        with left:
            show_response(ws, responses[sample.response], "Response")
        with right:
            show_checklist(checklist)
    else:
        pair = PairSample.model_validate(row.payload)
        first, second, side = st.columns([2, 2, 2])
        with first:
            show_response(ws, responses[pair.first], "First response")
        with second:
            show_response(ws, responses[pair.second], "Second response")
        with side:
            show_checklist(checklist)
    with st.form(f"judge-{kind}-form-{row.position}"):
        _criterion_inputs(kind, row.position, draft)
        cols = st.columns(3)
        previous = cols[0].form_submit_button("Previous", icon=":material/arrow_back:", shortcut=PREVIOUS)
        following = cols[1].form_submit_button("Next", icon=":material/arrow_forward:", shortcut=NEXT)
        applied = cols[2].form_submit_button("Apply", type="primary", icon=":material/check:", shortcut=SUBMIT)
    keys_help(
        ("Tab and arrows", "choose on each criterion"),
        (f"{PREVIOUS} / {NEXT}", "previous / next sample (keeps a draft)"),
        (SUBMIT, "apply"),
    )
    shown_key, now = f"judge-{kind}-shown-{row.position}", sample_store.sample_seen(ws, row.id)
    seen = st.session_state.get(shown_key, now)  # what the previous run showed: what an Apply was made on
    st.session_state[shown_key] = now
    if seen != now:
        st.warning("This sample changed since you opened it (its checklist): what you see now is the new content.")
    try:
        if applied:
            annotation_store.save_annotation(ws, row.id, user.name, _values(kind, row.position), apply=True, seen=seen)
            _move(
                ws,
                user,
                kind,
                sample_store.next_sample(ws, user.name, kind, after=row.position),
                f"Applied {sample_name(row)}.",
            )
        elif following:
            _save_draft(ws, user, kind, row)
            _move(ws, user, kind, sample_store.next_sample(ws, user.name, kind, after=row.position), None)
        elif previous:
            _save_draft(ws, user, kind, row)
            target = sample_store.previous_sample(ws, user.name, kind, before=row.position)
            if target is None:
                st.warning("This is the first sample you can see.")
            else:
                _move(ws, user, kind, target, None)
    except CurateError as exc:
        show_error(exc)


def _move(ws: Workspace, user: SignedIn, kind: str, target: Any, message: str | None) -> None:
    if message:
        flash(message)
    if target is None:
        st.session_state.pop(CURRENT.format(kind=kind), None)
    else:
        st.session_state[CURRENT.format(kind=kind)] = target.id
    st.rerun()
