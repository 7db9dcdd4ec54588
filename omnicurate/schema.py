"""Every package's tables on one metadata: what the migration chain must build, and what autogenerate compares.

The domain's migration environment cannot import the packages above it, so the composition lives here,
in the shell that may import them all. Each package owns its tables module; add a new one to ``TABLE_MODULES``.
"""

from __future__ import annotations

from importlib import import_module

from sqlalchemy import MetaData
from sqlmodel import SQLModel

TABLE_MODULES = (
    "curation.tables",
    "curation.audit.tables",
    "annotation_ui.labelstudio.tables",
    "exports.tables",
    "checker.tables",
    "curation.kinds.judge.tables",
    "curation.kinds.judge.query_tables",
    "curation.kinds.judge.caption_draw_tables",
    "curation.screening.tables",
    "curation.study.tables",
    "curation.work_tables",
    "curation.reference_tables",
    "curation.audio_production.tables",
)
"""Module -> tables it owns; each is created by the migration its docstring names."""


def all_tables() -> MetaData:
    """The shared SQLModel metadata with every package's tables registered on it."""
    for name in TABLE_MODULES:
        import_module(name)
    return SQLModel.metadata
