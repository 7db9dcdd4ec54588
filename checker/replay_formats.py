"""The lines of the replay files the structured and the free-form backends read (``replay:FILE``): recorded
model answers, written by hand or by a recording run, so that a command gives the same result without the
model. (The probe replay is :class:`checker.backends.replay.ReplayLine`; the checklist-draft replay is
:class:`curation.kinds.judge.drafting.DraftReplayLine`.)"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from curation.screening.model import TASKS

ScreeningTask = Literal["book_meta", "conditions", "speech", "score"]
assert set(get_args(ScreeningTask)) == set(TASKS), "the replay's tasks are the screening's"


class StructuredReplayLine(BaseModel):
    """One line of a screening replay file (``curate screen --backend replay:FILE``, ``[screen.model] backend``
    and its ``[screen.model.<step>]`` sections): the recorded answer of one subject to one task. One line per
    subject and task; a request without its line stops the screen naming both."""

    model_config = ConfigDict(extra="forbid", strict=True)

    subject: str = Field(min_length=1)
    """A candidate id; for ``book_meta``, ``book:`` and the book's id (metadata is asked once per book)."""
    task: ScreeningTask
    """``book_meta`` (App. D's first prompt), ``conditions`` (the next-page conditions), ``speech`` (the speech
    target) or ``score`` (the four screening criteria)."""
    output: Any
    """The model's JSON answer, checked against the task's schema when the step reads it: an answer the schema
    refuses (or one that is not an object) is recorded as invalid (``score:invalid``,
    ``annotate:invalid_<task>``), as a live model's would be."""


class GenerationReplayLine(BaseModel):
    """One line of a free-form replay file (``curate judge queries prescreen``, ``curate judge respond`` and
    ``curate judge run`` with ``--backend replay:FILE``): the recorded text of one call. One line per key."""

    model_config = ConfigDict(extra="forbid", strict=True)

    key: str = Field(min_length=1)
    """The call: a query id (prescreen), a task id (respond), or ``SAMPLE|SETTING|ORDER|RUN|INDEX`` for a judge's
    answer (``curate judge run``: SETTING ``overall``, ``rubric`` or ``checklist``; ORDER ``shown``, or for a pair
    also ``swapped``, its responses the other way round; RUN the ``--run`` number, from 1; INDEX the repeated
    sample, from 0)."""
    output: str
    """The model's answer as text (for a judge or a prescreen, the JSON its prompt asks for)."""
    model: str = ""
    """The model that answered, named in the provenance (one name for the whole file; else ``replay``)."""
