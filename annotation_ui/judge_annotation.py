"""The score and pair annotation pages (Judge Anything's annotation app, App. C): the current sample, its inputs,
and Apply, Previous and Next.

Every choice is kept as the person's draft on the server the moment it is made (``curation.drafts``, page
``judge_score`` or ``judge_pair``, per sample), so a reload, a crash or another device resumes it: the page comes
back on the sample of the newest draft and says the draft was restored. Apply records the annotation, naming the
sample content the page showed (``stale:<kind>_annotation`` when it changed since), and drops the draft; Previous
and Next move without recording. The queue serves each sample to the configured number of annotators and never
twice to one person (``curation.kinds.judge.sample_store``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from curation.drafts import discard_draft, load_draft, newest_draft, save_draft
from curation.errors import CurateError, NotFoundError
from curation.kinds.judge import annotation_store, record_store, sample_store, task_store
from curation.kinds.judge.rubrics import CHOICES, CRITERIA, DEFINITIONS, SCALE
from curation.kinds.judge.schema import PairSample, ScoreSample
from curation.kinds.judge.tables import JudgeSample
from curation.workspace import Workspace

from .components import flash, guidelines_panel
from .judge_ui import remember_shown, sample_name, show_checklist, show_refusal, show_response, show_task
from .logic import SignedIn
from .shortcuts import NEXT, PREVIOUS, SUBMIT, keys_help

CURRENT = "judge-{kind}-current"


def draft_page(kind: str) -> str:
    """The drafts' page name of the score or pair page."""
    return f"judge_{kind}"


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


def _keep_draft(ws: Workspace, person: str, kind: str, sample_id: str, number: int) -> None:
    """A radio's on_change: the sample's choices so far, kept on the server (a reload resumes them)."""
    save_draft(ws, person, draft_page(kind), sample_id, _values(kind, number))


def _first_sample(ws: Workspace, user: SignedIn, kind: str) -> JudgeSample | None:
    """Where a new session starts: the sample of the person's newest draft while it is still open to them, else
    the next sample of their queue."""
    drafted = newest_draft(ws, user.name, draft_page(kind))
    if drafted is not None:
        try:
            row = sample_store.sample_row(ws, drafted)
        except NotFoundError:
            row = None
        if row is not None:
            open_here = sample_store.next_sample(ws, user.name, kind, after=row.position - 1)
            if open_here is not None and open_here.id == row.id:
                return row
    return sample_store.next_sample(ws, user.name, kind)


def _arrive(ws: Workspace, user: SignedIn, kind: str, row: JudgeSample, mine: Any) -> None:
    """When a sample comes on screen, fill its radios: the person's draft, else what they applied (if they did)."""
    drawn = f"judge-{kind}-drawn"
    notice = st.empty()  # on every run: when the notice goes, what follows keeps its place (no stale copies)
    if st.session_state.get(drawn) == row.id:
        return
    st.session_state[drawn] = row.id
    draft = load_draft(ws, user.name, draft_page(kind), row.id)
    values = draft if draft else ((mine.payload.get("scores") or mine.payload.get("choices") or {}) if mine else {})
    for criterion in CRITERIA:
        key = _slot(kind, row.position, criterion)
        if values.get(criterion) is not None:
            st.session_state[key] = values[criterion]
        else:
            st.session_state.pop(key, None)
    if draft:
        notice.info(f"Your unsaved draft of {sample_name(row)} was restored.", icon=":material/restore:")


def _criterion_inputs(ws: Workspace, user: SignedIn, kind: str, row: JudgeSample) -> None:
    """One horizontal radio per criterion (keyboard: Tab to it, arrows to choose); each change is kept."""
    options: list[Any] = list(range(1, 6)) if kind == "score" else list(CHOICES)
    for criterion in CRITERIA:
        help_text = DEFINITIONS[criterion]
        if kind == "score":
            help_text += "\n\n" + "\n\n".join(f"{k}: {v}" for k, v in SCALE[criterion].items())
        st.radio(
            criterion.capitalize(),
            options,
            index=None,
            horizontal=True,
            key=_slot(kind, row.position, criterion),
            help=help_text,
            on_change=_keep_draft,
            args=(ws, user.name, kind, row.id, row.position),
        )


def annotation_page(ws: Workspace, user: SignedIn, kind: str) -> None:
    """The score or pair page: the current sample, its inputs and Apply / Previous / Next."""
    current_key = CURRENT.format(kind=kind)
    guidelines_panel(kind)
    progress = annotation_store.progress(ws, user.name, kind)
    st.caption(
        f"{progress['mine']} applied by you · {progress['complete']} of {progress['samples']} samples have all their "
        f"annotators ({ws.settings.judge.annotators_per_sample} each)"
    )
    sample_id = st.session_state.get(current_key)
    row = sample_store.sample_row(ws, sample_id) if sample_id is not None else _first_sample(ws, user, kind)
    if row is None:
        st.info("Nothing waits for you here: every sample has its annotators or was annotated by you.")
        st.stop()
    assert row is not None
    st.session_state[current_key] = row.id
    mine = annotation_store.annotation(ws, row.id, user.name)
    _arrive(ws, user, kind, row, mine)
    # what the previous run showed: what an Apply in this run was made on
    seen = remember_shown(f"judge-{kind}-shown-{row.position}", sample_store.sample_seen(ws, row.id), "This sample")
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
    with st.container(border=True):  # no form: each choice is kept as a draft the moment it is made
        _criterion_inputs(ws, user, kind, row)
        cols = st.columns(3)
        previous = cols[0].button("Previous", icon=":material/arrow_back:", shortcut=PREVIOUS)
        following = cols[1].button("Next", icon=":material/arrow_forward:", shortcut=NEXT)
        applied = cols[2].button("Apply", type="primary", icon=":material/check:", shortcut=SUBMIT)
    keys_help(
        ("Tab and arrows", "choose on each criterion (every choice is kept as your draft)"),
        (f"{PREVIOUS} / {NEXT}", "previous / next sample"),
        (SUBMIT, "apply"),
    )
    try:
        if applied:
            annotation_store.save_annotation(ws, row.id, user.name, _values(kind, row.position), apply=True, seen=seen)
            discard_draft(ws, user.name, draft_page(kind), row.id)
            target = sample_store.next_sample(ws, user.name, kind, after=row.position)
            _move(kind, target, f"Applied {sample_name(row)}.")
        elif following:
            _move(kind, sample_store.next_sample(ws, user.name, kind, after=row.position), None)
        elif previous:
            target = sample_store.previous_sample(ws, user.name, kind, before=row.position)
            if target is None:
                st.warning("This is the first sample you can see.")
            else:
                _move(kind, target, None)
    except CurateError as exc:
        show_refusal(exc, {f"sample {row.id}": sample_name(row), row.id: sample_name(row)})


def _move(kind: str, target: JudgeSample | None, message: str | None) -> None:
    if message:
        flash(message)
    if target is None:
        st.session_state.pop(CURRENT.format(kind=kind), None)
    else:
        st.session_state[CURRENT.format(kind=kind)] = target.id
    st.rerun()
