"""The public read model of the derivation: statuses, the records that count, group records, checklists.

Loaded once per use (one session, one derivation) and shared by the exports, the checker, agreement
statistics and the UI, so none of them builds its own ``Derivation`` or reads its internals.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .config import ReviewSettings
from .facts import ItemFacts, RecordFacts
from .kinds import GroupStage, Kind, kind_of
from .kinds.mcq import combine_checklist
from .staffing import StaffingCheck, StaffingGap
from .tables import GateResult
from .workflow import Derivation, ItemStatus, StatusInputs, collector_paused, open_groups

__all__ = ["DerivedState", "load_derived"]


@dataclass
class DerivedState:
    """Everything derived from one load of the workspace. Build it with :func:`load_derived`."""

    inputs: StatusInputs
    statuses: list[ItemStatus]
    _derivation: Derivation = field(repr=False)
    staffing: dict[str, StaffingGap] = field(default_factory=dict)
    """Items in review that the workspace's reviewers cannot finish under the rule (``curation.staffing``)."""

    # ----- items and groups ------------------------------------------------------------------
    @cached_property
    def facts(self) -> dict[str, ItemFacts]:
        return {i.id: i for i in self.inputs.items}

    @cached_property
    def status_by_id(self) -> dict[str, ItemStatus]:
        return {st.id: st for st in self.statuses}

    @property
    def derivation(self) -> Derivation:
        """The derivation that produced these statuses (its found records and caches): a release's admission
        record judges every stage again with it instead of a fresh one."""
        return self._derivation

    @property
    def settings(self) -> ReviewSettings:
        """The review settings the statuses were derived under."""
        return self._derivation.settings

    @property
    def perturbed(self) -> dict[str, str]:
        return self.inputs.perturbed

    @property
    def discarded(self) -> set[str]:
        return self._derivation.discarded

    @cached_property
    def _sisters(self) -> dict[str, list[ItemFacts]]:
        groups: dict[str, list[ItemFacts]] = defaultdict(list)
        for item in self.inputs.items:
            if item.id not in self._derivation.discarded:
                groups[item.group].append(item)
        return groups

    def sisters(self, group: str) -> list[ItemFacts]:
        """The group's live (not discarded) items, in id order."""
        return list(self._sisters.get(group, []))

    def kind(self, item_id: str) -> Kind:
        return kind_of(self.facts[item_id].kind)

    @cached_property
    def staffing_check(self) -> StaffingCheck:
        """What queues ask before offering an entry: would this person taking it leave a later stage unstaffed."""
        inputs = self.inputs
        return StaffingCheck(self._derivation, inputs.reviewers, inputs.shown or {}, inputs.abilities)

    # ----- records ---------------------------------------------------------------------------
    def records(self, item_id: str, stage: str) -> list[RecordFacts]:
        """The stage's records that count for the item's current content (latest per allowed reviewer)."""
        item = self.facts[item_id]
        found = kind_of(item.kind).stage(stage)
        if not found.applies(item):
            return []
        return self._derivation.valid_records(item, found)

    def group_records(self, group: str, stage: str | None = None) -> list[RecordFacts]:
        """The group stage's records that count for the group's current live sisters."""
        sisters = self.sisters(group)
        if not sisters:
            return []
        gs = kind_of(sisters[0].kind).stage(stage) if stage else None
        return self._derivation.group_records(group, sisters, gs if isinstance(gs, GroupStage) else None)

    def item_records(self, item_id: str) -> Mapping[str, Sequence[RecordFacts]]:
        """Every stored record of the item by stage (all reviewers, all revisions): what separation rules read."""
        return self._derivation.item_records(item_id)

    def group_records_by_stage(self, group: str) -> Mapping[str, Sequence[RecordFacts]]:
        """Every stored record of the group by stage."""
        return self._derivation.subject_records(f"group:{group}")

    def separation_records(self, item_id: str) -> Mapping[str, Sequence[RecordFacts]]:
        """What an item stage's separation rule reads: the item's records and its group's."""
        return self._derivation.separation_records(self.facts[item_id])

    def group_separation_records(self, group: str) -> Mapping[str, Sequence[RecordFacts]]:
        """What a group stage's separation rule reads: the group's records and every live sister's."""
        return self._derivation.group_separation_records(group, self.sisters(group))

    def open_groups(self, stage: str = "group_integration") -> list[str]:
        """Groups whose every live sister passed its item stages: the only ones a group stage offers."""
        return open_groups(self.statuses, stage)

    def stage_passed(self, item_id: str, stage: str) -> bool:
        """Whether the item's current content passed STAGE (its quorum reached, nothing failing)."""
        item = self.facts[item_id]
        found = kind_of(item.kind).stage(stage)
        return found.applies(item) and self._derivation.judge(item, found).passed is True

    def group_rules(self, group: str) -> list[str]:
        """The automatic group checks on the live sisters."""
        return self._derivation.group_rule_reasons(group, self.sisters(group))

    def overrides(self, item_id: str) -> dict[str, str]:
        """The maintainer's stage overrides on the item's current revision."""
        return self._derivation.overrides(item_id)

    def consensus(self, item_id: str, stage: str = "subset_checklist") -> RecordFacts | None:
        """The maintainer's consensus record that settles the stage on the item's current inputs, if any."""
        return self._derivation.consensus(self.facts[item_id], stage)

    def checklist(self, item_id: str, stage: str = "subset_checklist") -> dict[str, list[str]] | None:
        """The checklist that decides (per view, sorted option keys): a maintainer's consensus, else the
        reviewers' combined sets once the stage has its quorum, else None."""
        item = self.facts[item_id]
        found = kind_of(item.kind).stage(stage)
        consensus = self.consensus(item_id, stage)
        if consensus is not None:
            return {view: sorted(consensus.payload["consistent"].get(view, [])) for view in found.views(item)}
        valid = self.records(item_id, stage)
        settings = self._derivation.settings
        if len(valid) < found.quorum(settings):
            return None
        combined = combine_checklist([r.payload["consistent"] for r in valid], settings.combine, found.views(item))
        return {view: sorted(keys) for view, keys in combined.items()}

    def stage_summaries(self, item_id: str) -> dict[str, Any]:
        """Per stage of the item's kind, how it passed (the stage's admission summary; no reviewer names)."""
        item = self.facts[item_id]
        settings = self._derivation.settings
        out: dict[str, Any] = {}
        for stage in kind_of(item.kind).stages:
            if isinstance(stage, GroupStage):
                recs = self.group_records(item.group, stage.name)
                out[stage.name] = stage.admission(item, recs, settings)
            elif stage.applies(item):
                out[stage.name] = stage.admission(item, self.records(item_id, stage.name), settings)
                consensus = self._derivation.consensus(item, stage)
                if consensus is not None:  # the consensus decided: the release says so (no names)
                    out[stage.name] |= {"adjudicated": True, "consistent": self.checklist(item_id, stage.name)}
        return out

    def gates(self, item_id: str) -> list[GateResult]:
        """The item's stored gate results that judged its current content, by gate name."""
        digest = self.facts[item_id].content_hash
        rows = [g for g in self.inputs.gates if g.item_id == item_id and g.content_hash == digest]
        return sorted(rows, key=lambda g: g.gate)


def load_derived(ws: Any, inputs: StatusInputs | None = None) -> DerivedState:
    """Load the workspace once and derive every status (``inputs`` when the caller already loaded them)."""
    if inputs is None:
        with ws.session() as s:
            inputs = StatusInputs.load(s)
    with collector_paused():
        derivation = inputs.derivation(ws)
        statuses = derivation.derive_all()
        staffing = inputs.staffing(derivation, statuses)
    return DerivedState(inputs, statuses, derivation, staffing)
