"""The ``judge_task`` kind in the registry: its stages (checklist curation, blind cross-check, response
review), modalities (text, image, audio, video) and release layout.

Judge tasks are not rows of the ``item`` table (they have no options or label, and responses are judged
apart from their task), so their records live in ``judge_record`` and are imported with ``curate judge
import records``; a judge record given to ``curate import reviews`` is refused with that pointer. Where a
task stands is derived by :func:`curation.kinds.judge.status.task_status`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from .._parts import Kind, ReleaseLayout, Stage
from .._registry import register_kind
from .schema import JUDGE_MODALITIES, TaskLine

RELEASE_FILES = (
    "data/tasks.jsonl",
    "data/checklists.jsonl",
    "data/responses.jsonl",
    "data/score_samples.jsonl",
    "data/pair_samples.jsonl",
    "data/score_annotations.jsonl",
    "data/pair_annotations.jsonl",
    "data/judge_outputs.jsonl",
    "data/tasks.parquet",  # the tasks and responses again, media as `datasets` features (exports.judge_parquet)
    "data/responses.parquet",
)
TASK_COLUMNS = ("id", "instruction", "inputs", "output", "modality_pair", "source", "license")


class _ImportedApart(BaseModel):
    """Stands for a judge stage's record where item reviews are read: always refused, with the way in."""

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="before")
    @classmethod
    def _refuse(cls, data: Any) -> Any:
        raise ValueError("judge_task records are imported with `curate judge import records FILE`")


class _JudgeStage(Stage):
    record_model = _ImportedApart
    page = None
    labelstudio = None


class ChecklistCuration(_JudgeStage):
    name = "checklist_curation"
    help = "Select 1–6 of the model-drafted checklist entries; rewrite one or add one if needed."


class ChecklistCrosscheck(_JudgeStage):
    name = "checklist_crosscheck"
    help = "A second person selects blind among the curated candidates; disagreements go to adjudication."


class ResponseReview(_JudgeStage):
    name = "response_review"
    help = "Each response: usable, or unusable with a reason; NSFW is never usable."


def _task_statuses(ws: Any) -> list[Any]:
    from .status import judge_statuses

    return judge_statuses(ws)


def _has_tasks(ws: Any) -> bool:
    from sqlalchemy import select
    from sqlmodel import col

    from .tables import JudgeTask

    with ws.session() as s:
        return s.execute(select(col(JudgeTask.id)).limit(1)).first() is not None


JUDGE_TASK = register_kind(
    Kind(
        name="judge_task",
        item_model=TaskLine,
        modalities=JUDGE_MODALITIES,
        default_modalities=("text",),
        stages=[ChecklistCuration(), ChecklistCrosscheck(), ResponseReview()],
        gates=(),
        release=ReleaseLayout(
            data_files=RELEASE_FILES,
            columns=lambda modalities: TASK_COLUMNS,
            builder="exports.judge_release:build_judge_release",
        ),
        min_modalities=1,
        has_answer=False,
        statuses=_task_statuses,
        has_units=_has_tasks,
    )
)
