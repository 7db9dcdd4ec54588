"""Every kind of Label Studio project, registered in one place.

``curate ls push NAME`` and ``curate ls pull [NAME]`` serve the review projects: each registered stage with a
Label Studio form (``curation.kinds``), and the review stages of a kind that are no item stage (the judge
kind's query screening). Rating projects — campaigns, the story study, judge samples, the human baseline — are pushed and pulled
by their own commands, through the same engine.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select

from curation.workspace import Workspace

from .audio_spot_check import SpotCheckProject
from .audio_takes import TakeChoiceProject
from .baseline import BaselineProject
from .campaigns import CampaignProject
from .engine import ProjectKind
from .judge_campaigns import JudgeSampleProject
from .judge_queries import QueryProject
from .stages import StageProject, pushed_stages
from .story_study import StudyProject
from .tables import LsProject

PROJECT_KINDS: tuple[type[ProjectKind], ...] = (
    StageProject,
    QueryProject,
    CampaignProject,
    StudyProject,
    JudgeSampleProject,
    BaselineProject,
    SpotCheckProject,
    TakeChoiceProject,
)
"""Every declaration on the engine."""

REVIEW_PROJECTS: dict[str, Callable[[Workspace], ProjectKind]] = {"query_screen": QueryProject}
"""Review projects served by ``curate ls`` beside the registered stages, by the name it takes."""


def review_project(ws: Workspace, name: str) -> ProjectKind:
    """The review project ``curate ls push NAME`` means: a listed review project, else a registered stage."""
    found = REVIEW_PROJECTS.get(name)
    return found(ws) if found is not None else StageProject(ws, name)


def pushed_reviews(ws: Workspace) -> list[str]:
    """The review projects this workspace pushed: stages in registry order, then the others."""
    with ws.session() as s:
        keys = set(s.execute(select(LsProject.key)).scalars())
    return pushed_stages(ws) + [name for name, make in REVIEW_PROJECTS.items() if make(ws).key in keys]
