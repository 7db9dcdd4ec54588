"""Benchmark kinds: a kind is a benchmark's shape — item schema, modalities and views, stages, gates and
release layout — and every part of omnicurate that loops over stages or gates iterates this registry.

Adding a stage is one module (a :class:`Stage` subclass) and one registration (``kind_of("mcq").add_stage``);
adding a kind is one package that builds a :class:`Kind` and calls :func:`register_kind`. Items carry their
kind (``item.kind``, default ``mcq``) and a workspace may hold several. Stage names are unique across kinds,
since a review record names only its stage.

Public API (everything else in this package is private)::

    Kind, Stage, GroupStage, UiPage, LabelStudioSpec, Control, ReleaseLayout, Gate, GateFinding, ADJUDICATION,
    StageOutcome, ItemFacts, RecordFacts, not_author, no_sister_author, verdict_counts,
    register_kind, kind_of, kinds, kind_statuses, kinds_present, all_stages, stage_inputs, stage_named,
    stage_names, stage_registered
"""

from __future__ import annotations

from ..facts import ItemFacts, RecordFacts, StageOutcome
from ._parts import (
    ADJUDICATION,
    Control,
    Gate,
    GateFinding,
    GroupSeparation,
    GroupStage,
    Kind,
    LabelStudioSpec,
    RecordsByStage,
    ReleaseLayout,
    Separation,
    Stage,
    UiPage,
    no_sister_author,
    not_author,
    verdict_counts,
)
from ._registry import (
    all_stages,
    kind_of,
    kind_statuses,
    kinds,
    kinds_present,
    register_kind,
    stage_inputs,
    stage_named,
    stage_names,
    stage_registered,
    unregister_kind,
)

__all__ = [
    "ADJUDICATION",
    "all_stages",
    "Control",
    "Gate",
    "GateFinding",
    "GroupSeparation",
    "GroupStage",
    "ItemFacts",
    "Kind",
    "LabelStudioSpec",
    "RecordFacts",
    "RecordsByStage",
    "ReleaseLayout",
    "Separation",
    "Stage",
    "StageOutcome",
    "UiPage",
    "kind_of",
    "kind_statuses",
    "kinds_present",
    "kinds",
    "no_sister_author",
    "not_author",
    "register_kind",
    "stage_inputs",
    "stage_named",
    "stage_names",
    "stage_registered",
    "unregister_kind",
    "verdict_counts",
]
