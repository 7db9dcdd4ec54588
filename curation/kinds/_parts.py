"""The parts a kind is made of: stages (per item or per group), gates, UI and Label Studio declarations.

Everything here is plain data or pure functions over ``curation.facts``: no Streamlit, no Label Studio, no
database. The shells (annotation UI, Label Studio bridge, exports) read these declarations and render them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel

from ..facts import ItemFacts, RecordFacts, StageOutcome, digest
from ..vocab import checklist_views_of, views_of

if TYPE_CHECKING:
    from ..config import ReviewSettings

Scope = Literal["item", "group"]
ADJUDICATION = "adjudication"
"""The stage column of a maintainer's consensus record (``payload["stage"]`` names the stage it settles).

It is no stage of any kind: it is recorded by ``curation.adjudication`` (never by ``import reviews``) and
read by the derivation for the stages that are ``adjudicable``."""
RecordsByStage = Mapping[str, Sequence[RecordFacts]]
"""One subject's records (every reviewer, every revision), by stage: what a separation rule may consult."""


@dataclass(frozen=True)
class UiPage:
    """A page of the annotation UI, named by its path relative to the ``annotation_ui`` package.

    The domain never imports Streamlit: the app resolves the path when it builds its navigation.
    """

    path: str
    title: str
    icon: str = ":material/rate_review:"


@dataclass(frozen=True)
class Control:
    """One control of a Label Studio labeling config, as the bridge validates pulled results against it."""

    kind: Literal["choices", "rating", "textarea"]
    required: bool = False
    choices: tuple[str, ...] = ()
    """Allowed values; empty with ``from_options`` means the item's options decide."""
    from_options: bool = False
    multiple: bool = False
    max_rating: int = 5


@dataclass(frozen=True)
class LabelStudioSpec:
    """How a stage is served as a Label Studio project (rendered by ``annotation_ui.labelstudio``).

    ``task_fields`` name the task data the bridge fills in (``context``, ``question``, ``options``,
    ``options_html``, ``image``, ``audio``, ``panel``, ``view_title``, ``group_panel``); with ``per_view``
    the bridge makes one task per item and checklist view, each showing only that view's modalities.
    """

    label_config: str
    controls: Mapping[str, Control]
    task_fields: tuple[str, ...] = ("context", "question")
    per_view: bool = False


def not_author(reviewer: str, item: ItemFacts, records: RecordsByStage) -> str | None:
    """The default separation rule: nobody reviews an item they authored."""
    if item.authored_by(reviewer):
        return f"{reviewer!r} authored {item.id!r}: nobody reviews their own item"
    return None


def no_sister_author(reviewer: str, group: str, sisters: Sequence[ItemFacts], records: RecordsByStage) -> str | None:
    """The default separation rule of a group stage: no author of any sister reviews the group."""
    if any(s.authored_by(reviewer) for s in sisters):
        return f"{reviewer!r} authored an item of group {group!r} and cannot review it"
    return None


Separation = Callable[[str, ItemFacts, RecordsByStage], "str | None"]
"""``(reviewer, item, the item's records by stage) -> refusal reason or None``."""
GroupSeparation = Callable[[str, str, Sequence[ItemFacts], RecordsByStage], "str | None"]
"""``(reviewer, group, live sisters, the group's records by stage) -> refusal reason or None``."""


class Stage:
    """One review stage, as one object: everything the derivation, the UI, Label Studio and the release ask of it.

    Subclass it, set the class attributes, override ``inputs`` and ``judge`` (and what else differs), then
    register an instance with its kind (``Kind.add_stage``). A stage is per item (``scope = "item"``) unless it
    is a :class:`GroupStage`.
    """

    name: ClassVar[str]
    record_model: ClassVar[type[BaseModel]]
    """Pydantic model of one JSONL review record of this stage (``item``/``group``, ``stage``, ``reviewer``, ...)."""
    scope: ClassVar[Scope] = "item"
    default_quorum: ClassVar[int] = 1
    """Used when ``[review]`` has no ``<name>_quorum`` setting."""
    modality: ClassVar[str | None] = None
    """A stage about one modality applies only to items that have it (``audio_signoff`` needs audio)."""
    page: ClassVar[UiPage | None] = None
    labelstudio: ClassVar[LabelStudioSpec | None] = None
    help: ClassVar[str] = ""
    adjudicable: ClassVar[bool] = False
    """Whether a maintainer's consensus record (:data:`ADJUDICATION`) settles this stage: while it judges the
    current inputs, :meth:`judge_consensus` decides instead of :meth:`judge`."""
    blind: ClassVar[bool] = False
    """A blind stage (the answer check) refuses, and its queue never offers, an item whose label the reviewer
    was exposed to (``curation.exposure``)."""

    def __init__(self, separation: Separation | None = None) -> None:
        self.separation: Separation = separation or not_author
        """Who may do this stage on an item; the default is :func:`not_author`."""

    def separation_rule(self, settings: ReviewSettings) -> Separation:
        """The rule in force: this stage's own, unless it is TRIAD's and ``[review] separation`` relaxes it."""
        if getattr(self.separation, "policy", None) == "triad" and settings.separation != "triad":
            return not_author
        return self.separation

    def __repr__(self) -> str:
        return f"<stage {self.name}>"

    # ----- derivation --------------------------------------------------------------------------
    def quorum(self, settings: ReviewSettings) -> int:
        return int(getattr(settings, f"{self.name}_quorum", self.default_quorum))

    def applies(self, item: ItemFacts) -> bool:
        return self.modality is None or self.modality in item.modalities

    def inputs(self, item: ItemFacts) -> str:
        """Hash of what the stage judges: a record counts while the item's inputs hash is unchanged."""
        return digest(self.name, item.context, item.question, item.options)

    def judge(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> StageOutcome:
        """Reason codes from the valid records (one per reviewer); ``passed`` None while short of quorum."""
        if any(r.payload.get("verdict") == "fail" for r in records):
            return StageOutcome(False, [self.name])
        return StageOutcome(True if len(records) >= self.quorum(settings) else None)

    def judge_consensus(self, item: ItemFacts, consensus: Mapping[str, Any], settings: ReviewSettings) -> StageOutcome:
        """The stage's outcome from a maintainer's consensus record's payload (``adjudicable`` stages)."""
        raise NotImplementedError(f"stage {self.name!r} is not adjudicable")

    def settle(
        self, item: ItemFacts, consensus: Mapping[str, Any], records: Sequence[RecordFacts], settings: ReviewSettings
    ) -> StageOutcome:
        """The outcome while a maintainer's consensus settles the stage; ``records``: the reviewers' counted
        records, for what the consensus does not replace (the checklist's exclusion attestations)."""
        return self.judge_consensus(item, consensus, settings)

    # ----- recording ---------------------------------------------------------------------------
    def record_problems(self, review: BaseModel, item: ItemFacts) -> list[tuple[str, str]]:
        """``(field, message)`` for what the record gets wrong about this item (options it does not have, ...)."""
        return []

    def settings_problems(self, review: BaseModel, settings: ReviewSettings) -> list[tuple[str, str]]:
        """``(field, message)`` for what the record gets wrong about the workspace's settings (an exclusion rule
        it does not list, ...): checked where records are stored, since record models know no workspace."""
        return []

    # ----- release -----------------------------------------------------------------------------
    def admission(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> dict[str, Any]:
        """How the item passed this stage, for the release's admission summaries (no reviewer names)."""
        return verdict_counts(records)

    # ----- Label Studio ------------------------------------------------------------------------
    def labelstudio_spec(self, settings: ReviewSettings) -> LabelStudioSpec | None:
        """The stage's Label Studio project under the workspace's settings (``labelstudio`` unless the settings
        add controls: the checklist asks each exclusion rule)."""
        return self.labelstudio

    def task_values(self, item: ItemFacts) -> dict[str, Any]:
        """Task data of the stage's own beyond ``task_fields`` (plain values; the bridge escapes nothing more)."""
        return {}

    def task_media(self, item: ItemFacts) -> dict[str, str]:
        """Task data field -> content hash of an image the task shows beyond ``task_fields`` (published and
        turned into a URL by the bridge)."""
        return {}

    def prefill(self, item: ItemFacts) -> dict[str, Any]:
        """Control name -> the value its form starts with for this item (none by default)."""
        return {}

    def annotation_problems(self, item: ItemFacts, fields: Mapping[str, Any]) -> list[str]:
        """Why a record made of these fields (``record_from_annotation``) cannot be accepted for this item,
        beyond its record model's own checks; the bridge refuses the annotation with these reasons."""
        return []

    def views(self, item: ItemFacts) -> tuple[str, ...]:
        """The checklist views of a ``per_view`` stage for this item."""
        return checklist_views_of(item.modalities)

    def record_from_annotation(
        self, item: ItemFacts | None, values: Mapping[str | None, Mapping[str, Any]]
    ) -> dict[str, Any] | None:
        """The record's own fields from a reviewer's annotation values (by view, ``None`` when not per view).

        None while the annotation is incomplete (a checklist still missing views). The default reads each
        control: a single choice as its value, several choices as a list, a rating or a text as it is.
        """
        spec = self.labelstudio
        assert spec is not None
        first = next(iter(values.values()))
        out: dict[str, Any] = {}
        for name, control in spec.controls.items():
            if name not in first:
                if control.kind == "textarea":
                    out[name] = ""
                continue
            value = first[name]
            out[name] = value[0] if control.kind == "choices" and not control.multiple else value
        return out


class GroupStage(Stage):
    """A stage judged once per group of sister items (TRIAD's group integration); optional in a kind.

    It opens when every live sister has passed its item stages; its ``rules`` are automatic checks across
    sisters, reported (as a heads-up) from the start.
    """

    scope: ClassVar[Scope] = "group"

    def __init__(self, separation: GroupSeparation | None = None) -> None:
        self.group_separation: GroupSeparation = separation or no_sister_author

    def group_separation_rule(self, settings: ReviewSettings) -> GroupSeparation:
        """The group rule in force: this stage's own, unless it is TRIAD's and the workspace relaxes it."""
        if getattr(self.group_separation, "policy", None) == "triad" and settings.separation != "triad":
            return no_sister_author
        return self.group_separation

    def group_inputs(self, perturbed: str, sisters: Sequence[ItemFacts]) -> str:
        """Hash of the group's content; any sister's revision invalidates group reviews."""
        return digest(self.name, perturbed, sorted((s.id, s.content_hash) for s in sisters))

    def rules(self, perturbed: str, sisters: Sequence[ItemFacts], settings: ReviewSettings) -> list[str]:
        """Automatic checks across sisters, as ``group:<rule>`` reason codes."""
        return []

    def judge_group(self, records: Sequence[RecordFacts], settings: ReviewSettings) -> StageOutcome:
        if any(r.payload.get("verdict") == "fail" for r in records):
            return StageOutcome(False, ["group:reviewer_fail"])
        return StageOutcome(True if len(records) >= self.quorum(settings) else None)


def verdict_counts(records: Sequence[RecordFacts]) -> dict[str, Any]:
    """``{"reviews": n, "verdicts": {"pass": k, ...}}``: the admission summary of a pass/fail stage."""
    counts: dict[str, int] = {}
    for r in records:
        key = str(r.payload.get("verdict"))
        counts[key] = counts.get(key, 0) + 1
    return {"reviews": len(records), "verdicts": dict(sorted(counts.items()))}


# ----- gates ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GateFinding:
    """What a gate says of one item: reason codes (empty: the item passes) and details for people."""

    reasons: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)


class Gate(Protocol):
    """An item-level gate: reads items (and the workspace), returns findings; never decides blocking.

    Whether a finding blocks (``held``, a refused release) or only warns is the workspace's policy,
    ``Settings.gates.mode(name)``, applied in one place by the derivation and by the release build.
    """

    name: str

    def __call__(self, ws: Any, item_ids: Sequence[str]) -> Mapping[str, GateFinding]: ...


# ----- release layout ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReleaseLayout:
    """What a release of this kind contains (its data files, every one of which ``release verify`` requires)
    and how its units are shipped: the record columns, the file of one unit per line, the media fields."""

    data_files: tuple[str, ...]
    columns: Callable[[Sequence[str]], tuple[str, ...]]
    """The record columns for a release whose items have these modalities (a column of an absent one goes)."""
    unit_file: str | None = None
    """The JSONL file of the release's units, one object with an ``id`` per line (None: the kind checks its own)."""
    media_fields: tuple[str, ...] = ()
    """The fields of a unit (and of its manifest record) that name a shipped medium."""
    builder: str | None = None
    """``module:function`` that builds a release of this kind (resolved by the release shell, as the app
    resolves a :class:`UiPage`); called as ``function(ws, version, out=, license=, name=, actor=, ...)``."""


# ----- the kind ------------------------------------------------------------------------------------
@dataclass
class Kind:
    """A benchmark's shape: item schema, modalities and views, stages, gates and release layout.

    ``stages`` are in the order reviewers meet them; group stages (if any) come after the item stages.
    ``gates`` name the item-level gates admission and release consult.
    """

    name: str
    item_model: type[BaseModel]
    modalities: tuple[str, ...]
    """Every modality items of this kind may have."""
    default_modalities: tuple[str, ...]
    stages: list[Stage]
    gates: tuple[str, ...] = ()
    release: ReleaseLayout | None = None
    min_modalities: int = 1
    has_answer: bool = True
    """Whether items carry options and a label (a kind may have neither)."""
    statuses: Callable[[Any], list[Any]] | None = None
    """Where each unit stands (``ItemStatus`` rows) for a kind whose units live in its own tables, not in the
    ``item`` table; given the workspace. None: the item table's derivation covers the kind."""
    has_units: Callable[[Any], bool] | None = None
    """Whether the workspace holds units of a kind that lives in its own tables (a cheap query, asked on every
    page of the UI); None: the kind's units are rows of the ``item`` table."""

    def views(self, modalities: Sequence[str]) -> tuple[str, ...]:
        """Every view (``none`` first) of an item with these modalities."""
        return views_of(tuple(modalities))

    @property
    def item_stages(self) -> list[Stage]:
        return [s for s in self.stages if s.scope == "item"]

    @property
    def group_stages(self) -> list[GroupStage]:
        return [s for s in self.stages if isinstance(s, GroupStage)]

    @property
    def stage_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.stages)

    def stage(self, name: str) -> Stage:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"unknown stage {name!r} of kind {self.name!r}; stages are {', '.join(self.stage_names)}")

    def add_stage(self, stage: Stage, before: str | None = None) -> None:
        """Register a stage: before ``before``, else last among the item stages (group stages stay last)."""
        if stage.name in self.stage_names:
            raise ValueError(f"kind {self.name!r} already has a stage {stage.name!r}")
        if before is not None:
            position = self.stage_names.index(before)
        elif stage.scope == "group":
            position = len(self.stages)
        else:
            position = len(self.item_stages)
        self.stages.insert(position, stage)

    def remove_stage(self, name: str) -> Stage:
        found = self.stage(name)
        self.stages.remove(found)
        return found
