"""The review flow: every item's state, next stage and reasons, derived from its content, its review records,
maintainers' decisions and the stored gate results — never stored, so they cannot drift.

The stages are those of the item's kind (``curation.kinds``; TRIAD's five for ``mcq``), iterated in order:
each stage object judges its own records, and a stage of a modality the item lacks does not apply.
Other modules read the derivation through ``curation.derived`` (the public read model).

Rules (design.md, "Reviews, groups and gates — the rules in one place"):
- every stage that has its quorum is judged and every violated rule is reported;
- a failed rule returns the item to its author (state ``returned``, stage = first failing stage);
  group rules are judged once the item's own stages passed (listed earlier as a heads-up);
- otherwise the first stage short of its quorum is pending (``in_review``);
- a review counts only while the inputs it judged are unchanged (``inputs_hash``), so a new revision
  invalidates exactly the stages whose inputs changed;
- sisters pass group integration together; a sister not through holds the others (``group:sister_pending``);
- a stage that holds (a checklist whose verdict depends on the combination rule, until a maintainer's
  consensus settles it) and item-level gates turn a fully reviewed item into ``held``; non-blocking gate results (a probe gate set
  to ``warn``) are listed among the reasons without changing the state.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlmodel import col

from .abilities import NO_ABILITIES, Abilities, abilities_of
from .bulk import collector_paused
from .config import ReviewSettings
from .exposure import EXPOSED
from .fact_loading import load_facts, load_records
from .facts import ItemFacts, MergedRecords, RecordFacts, StageOutcome
from .kinds import ADJUDICATION, GroupStage, Kind, Stage, kind_of, stage_names
from .kinds.mcq import combine_checklist, well_posedness_reasons
from .staffing import StaffingGap, apply_staffing, staffing_gaps
from .tables import Decision, Event, GateResult, Person

__all__ = [
    "Derivation",
    "ItemFacts",
    "ItemStatus",
    "RecordFacts",
    "StageOutcome",
    "StatusInputs",
    "collector_paused",
    "combine_checklist",
    "derive_status",
    "discarded_items",
    "funnel",
    "group_inputs",
    "live_sisters",
    "open_groups",
    "separation_records",
    "group_separation_records",
    "well_posedness_reasons",
]

GatePolicy = Callable[[str], str]
"""Gate name -> ``off``, ``warn`` or ``block``: the workspace's one blocking policy (``Settings.gates.mode``)."""


def group_inputs(perturbed: str, sisters: Iterable[ItemFacts]) -> str:
    """Hash of a group's content under TRIAD's group stage; any sister's revision invalidates group reviews."""
    stage = kind_of("mcq").stage("group_integration")
    assert isinstance(stage, GroupStage)
    return stage.group_inputs(perturbed, list(sisters))


@dataclass
class ItemStatus:
    id: str
    group: str
    state: str
    stage: str | None
    reasons: list[str] = field(default_factory=list)
    kind: str = "mcq"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "group": self.group,
            "kind": self.kind,
            "state": self.state,
            "stage": self.stage,
            "reasons": self.reasons,
        }


def discarded_items(decisions: Iterable[Decision]) -> set[str]:
    """Items whose latest discard or restore decision is a discard."""
    discarded: set[str] = set()
    for d in sorted(decisions, key=lambda d: (d.created_at, d.id or 0)):
        if d.kind == "discard":
            discarded.add(d.item_id)
        elif d.kind == "restore":
            discarded.discard(d.item_id)
    return discarded


def live_sisters(session) -> dict[str, list[ItemFacts]]:  # type: ignore[no-untyped-def]
    """Each group's items that are not discarded: what group reviews judge."""
    items, _ = load_facts(session)
    gone = discarded_items(session.execute(select(Decision)).scalars())
    groups: dict[str, list[ItemFacts]] = defaultdict(list)
    for item in items:
        if item.id not in gone:
            groups[item.group].append(item)
    return groups


def legacy_policy(probe_mode: str) -> GatePolicy:
    """The policy of a bare probe mode: the probe gate as given, every other gate blocks."""
    return lambda gate: probe_mode if gate == "probe" else "block"


class Derivation:
    """Derives every item's status from facts loaded once, iterating each item's kind's stages.

    ``derive_all`` is the entry point; ``valid_records`` and ``group_records`` give the records that count.
    """

    def __init__(
        self,
        settings: ReviewSettings,
        items: list[ItemFacts],
        perturbed: Mapping[str, str],
        records: Iterable[RecordFacts],
        decisions: Iterable[Decision] = (),
        gates: Iterable[GateResult] = (),
        gate_policy: str | GatePolicy = "off",
    ) -> None:
        self.settings = settings
        self.items = items
        self.perturbed = perturbed
        self._by_subject: dict[str, dict[str, list[RecordFacts]]] = defaultdict(lambda: defaultdict(list))
        for rec in records:
            self._by_subject[rec.subject][rec.stage].append(rec)
        decisions = list(decisions)
        self.discarded = discarded_items(decisions)
        self._overrides: dict[tuple[str, str], str] = {}
        revisions = {i.id: i.revision for i in items}
        for d in sorted(decisions, key=lambda d: (d.created_at, d.id or 0)):
            if d.kind == "override" and d.stage and d.revision == revisions.get(d.item_id):
                self._overrides[(d.item_id, d.stage)] = d.verdict or "pass"
        policy = legacy_policy(gate_policy) if isinstance(gate_policy, str) else gate_policy
        hashes = {i.id: i.content_hash for i in items}
        self.gate_reasons: dict[str, list[str]] = defaultdict(list)
        self.gate_warnings: dict[str, list[str]] = defaultdict(list)
        for g in gates:
            if hashes.get(g.item_id) != g.content_hash or not g.reasons:
                continue  # stale: judged an earlier content of the item
            mode = policy(g.gate)
            if mode == "off":
                continue
            (self.gate_reasons if mode == "block" else self.gate_warnings)[g.item_id].extend(g.reasons)
        self._kinds: dict[str, Kind] = {}
        self._valid: dict[tuple[Any, ...], list[RecordFacts]] = {}
        self._contexts: dict[tuple[str, str], Mapping[str, list[RecordFacts]]] = {}
        self._group_contexts: dict[tuple[str, tuple[str, ...]], Mapping[str, list[RecordFacts]]] = {}
        self.pending: dict[str, list[str]] = {}
        """Item -> its item stages still short of their quorum, in order (filled by ``derive_all``)."""

    def kind(self, item: ItemFacts) -> Kind:
        found = self._kinds.get(item.kind)
        if found is None:
            found = self._kinds[item.kind] = kind_of(item.kind)
        return found

    def overrides(self, item_id: str) -> dict[str, str]:
        """The maintainer's overrides on the item's current revision, stage -> verdict."""
        return {stage: v for (i, stage), v in sorted(self._overrides.items()) if i == item_id}

    # ----- per stage --------------------------------------------------------------------
    def item_records(self, item_id: str) -> Mapping[str, list[RecordFacts]]:
        """Every stored record of an item by stage (all reviewers and revisions): what separation rules read."""
        return self._by_subject.get(f"item:{item_id}", {})

    def subject_records(self, subject: str) -> Mapping[str, list[RecordFacts]]:
        """Every stored record of a subject (``item:<id>`` or ``group:<id>``) by stage."""
        return self._by_subject.get(subject, {})

    def separation_records(self, item: ItemFacts) -> Mapping[str, list[RecordFacts]]:
        """What an item stage's separation rule reads: the item's records and its group's, by stage (merged once
        per item: every stage of the item reads the same)."""
        key = (item.id, item.group)
        found = self._contexts.get(key)
        if found is None:
            found = self._contexts[key] = separation_records(self.subject_records, item)
        return found

    def group_separation_records(self, group: str, sisters: Sequence[ItemFacts]) -> Mapping[str, list[RecordFacts]]:
        """What a group stage's separation rule reads: the group's records and every live sister's, by stage
        (merged once per group and sisters)."""
        key = (group, tuple(s.id for s in sisters))
        found = self._group_contexts.get(key)
        if found is None:
            found = self._group_contexts[key] = group_separation_records(self.subject_records, group, sisters)
        return found

    def valid_records(self, item: ItemFacts, stage: str | Stage) -> list[RecordFacts]:
        """Records still valid for the current content and allowed by the stage's separation, latest per reviewer."""
        found = self.kind(item).stage(stage) if isinstance(stage, str) else stage
        return list(self._valid_of(item, found))

    def _valid_of(self, item: ItemFacts, found: Stage, wanted: str | None = None) -> list[RecordFacts]:
        """``valid_records`` without the copy (callers must not change it); ``wanted``: the stage's inputs hash
        of the item when the caller has it."""
        key = (item.id, item.revision, item.content_hash, found.name, self.settings.separation)
        known = self._valid.get(key)
        if known is None:
            known = self._valid[key] = self._valid_records(item, found, wanted)
        return known

    def _valid_records(self, item: ItemFacts, found: Stage, wanted: str | None) -> list[RecordFacts]:
        records = self.item_records(item.id).get(found.name)
        if not records:
            return []
        if wanted is None:
            wanted = found.inputs(item)
        rule = found.separation_rule(self.settings)
        context: Mapping[str, list[RecordFacts]] | None = None
        latest: dict[str, RecordFacts] = {}
        refused: dict[str, bool] = {}
        for rec in records:
            if rec.inputs_hash != wanted:
                continue
            bad = refused.get(rec.reviewer)
            if bad is None:
                context = self.separation_records(item) if context is None else context
                bad = refused[rec.reviewer] = rule(rec.reviewer, item, context) is not None
            if bad:
                continue
            prior = latest.get(rec.reviewer)
            if prior is None or (rec.revision, rec.id) > (prior.revision, prior.id):
                latest[rec.reviewer] = rec
        if len(latest) < 2:
            return list(latest.values())
        return sorted(latest.values(), key=lambda r: r.id)

    def consensus(self, item: ItemFacts, stage: str | Stage, wanted: str | None = None) -> RecordFacts | None:
        """The latest maintainer's consensus record that settles the stage on the item's current inputs
        (``wanted``: the stage's inputs hash of the item when the caller has it)."""
        found = self.kind(item).stage(stage) if isinstance(stage, str) else stage
        if not found.adjudicable:
            return None
        records = self.item_records(item.id).get(ADJUDICATION)
        if not records:
            return None
        if wanted is None:
            wanted = found.inputs(item)
        current = [r for r in records if r.payload.get("stage") == found.name and r.inputs_hash == wanted]
        return max(current, key=lambda r: r.id, default=None)

    def judge(self, item: ItemFacts, stage: str | Stage) -> StageOutcome:
        found = self.kind(item).stage(stage) if isinstance(stage, str) else stage
        if self._overrides:
            override = self._overrides.get((item.id, found.name))
            if override == "pass":
                return StageOutcome(True)
            if override == "fail":
                return StageOutcome(False, [f"overridden:{found.name}"])
        by_stage = self.item_records(item.id)
        recorded = found.name in by_stage
        settled = found.adjudicable and ADJUDICATION in by_stage
        wanted = found.inputs(item) if recorded or settled else None
        if settled:
            consensus = self.consensus(item, found, wanted)
            if consensus is not None:
                counted = self._valid_of(item, found, wanted) if recorded else []
                return found.settle(item, consensus.payload, counted, self.settings)
        return found.judge(item, self._valid_of(item, found, wanted) if recorded else [], self.settings)

    def group_records(
        self, group: str, sisters: Sequence[ItemFacts], stage: GroupStage | None = None
    ) -> list[RecordFacts]:
        """The group stage's records that count: current group content, allowed by its separation rule."""
        if stage is None:
            stages = self.kind(sisters[0]).group_stages if sisters else []
            if not stages:
                return []
            stage = stages[0]
        wanted = stage.group_inputs(self.perturbed[group], sisters)
        by_stage = self._by_subject.get(f"group:{group}", {})
        rule = stage.group_separation_rule(self.settings)
        refused: dict[str, bool] = {}
        context: Mapping[str, list[RecordFacts]] | None = None
        latest: dict[str, RecordFacts] = {}
        for rec in sorted(by_stage.get(stage.name, []), key=lambda r: r.id):
            if rec.inputs_hash != wanted:
                continue
            bad = refused.get(rec.reviewer)
            if bad is None:
                context = self.group_separation_records(group, sisters) if context is None else context
                bad = refused[rec.reviewer] = rule(rec.reviewer, group, sisters, context) is not None
            if not bad:
                latest[rec.reviewer] = rec
        return list(latest.values())

    def group_rule_reasons(self, group: str, sisters: list[ItemFacts]) -> list[str]:
        """Automatic checks across sisters (TRIAD C.2 step 6), from every group stage of their kind."""
        if not sisters:
            return []
        return [
            r
            for gs in self.kind(sisters[0]).group_stages
            for r in gs.rules(self.perturbed[group], sisters, self.settings)
        ]

    def group_review(self, group: str, sisters: list[ItemFacts]) -> StageOutcome:
        outcome, _ = self._group_outcome(group, sisters)
        return outcome

    def _group_outcome(self, group: str, sisters: list[ItemFacts]) -> tuple[StageOutcome, str | None]:
        """The group stages' combined outcome and the first stage that failed or is pending."""
        stages = self.kind(sisters[0]).group_stages if sisters else []
        pending: str | None = None
        for gs in stages:
            outcome = gs.judge_group(self.group_records(group, sisters, gs), self.settings)
            if outcome.passed is False:
                return outcome, gs.name
            if outcome.passed is None and pending is None:
                pending = gs.name
        return StageOutcome(None if pending else True), pending

    # ----- everything ------------------------------------------------------------------
    def derive_all(self) -> list[ItemStatus]:
        groups: dict[str, list[ItemFacts]] = defaultdict(list)
        for item in self.items:
            if item.id not in self.discarded:
                groups[item.group].append(item)
        item_outcome: dict[str, tuple[list[str], str | None, str | None]] = {}
        holds: dict[str, list[str]] = {}
        item_stages: dict[str, list[Stage]] = {}
        for item in self.items:
            if item.id in self.discarded:
                continue
            reasons: list[str] = []
            first_failed: str | None = None
            first_pending: str | None = None
            stages = item_stages.get(item.kind)
            if stages is None:
                stages = item_stages[item.kind] = self.kind(item).item_stages
            for stage in stages:
                if not stage.applies(item):
                    continue
                outcome = self.judge(item, stage)
                if outcome.held:
                    holds.setdefault(item.id, []).extend(outcome.reasons)
                elif outcome.passed is False:
                    reasons += outcome.reasons
                    first_failed = first_failed or stage.name
                elif outcome.passed is None:
                    reasons += outcome.reasons
                    first_pending = first_pending or stage.name
                    self.pending.setdefault(item.id, []).append(stage.name)
            item_outcome[item.id] = (reasons, first_failed, first_pending)
        group_state: dict[str, tuple[list[str], StageOutcome, str | None, bool, bool]] = {}
        for group, sisters in groups.items():
            has_group_stage = bool(self.kind(sisters[0]).group_stages)
            rules = self.group_rule_reasons(group, sisters)
            review, at = self._group_outcome(group, sisters)
            through = not has_group_stage or all(
                item_outcome[s.id][1] is None
                and item_outcome[s.id][2] is None
                and not self.gate_reasons.get(s.id)
                and not holds.get(s.id)
                for s in sisters
            )
            group_state[group] = (rules, review, at, through, has_group_stage)

        statuses = []
        for item in self.items:
            kind = item.kind
            if item.id in self.discarded:
                statuses.append(ItemStatus(item.id, item.group, "discarded", None, [], kind))
                continue
            reasons, first_failed, first_pending = item_outcome[item.id]
            held = holds.get(item.id, [])
            rules, review, at, all_through, has_group_stage = group_state[item.group]
            group_stage = at or (self.kind(item).group_stages[0].name if has_group_stage else None)
            override = self._overrides.get((item.id, group_stage)) if group_stage else None
            if override == "pass":
                rules, review = [], StageOutcome(True)
            elif override == "fail":
                review = StageOutcome(False, [f"overridden:{group_stage}"])
            if first_failed:
                reasons = reasons + rules + review.reasons
                statuses.append(ItemStatus(item.id, item.group, "returned", first_failed, reasons, kind))
            elif first_pending:  # group rules and holds are judged once through; shown early as a heads-up
                statuses.append(
                    ItemStatus(item.id, item.group, "in_review", first_pending, reasons + held + rules, kind)
                )
            elif rules or review.passed is False:
                reasons = reasons + rules + review.reasons
                statuses.append(ItemStatus(item.id, item.group, "returned", group_stage, reasons, kind))
            elif review.passed is None:
                statuses.append(ItemStatus(item.id, item.group, "in_review", group_stage, reasons + held, kind))
            elif self.gate_reasons.get(item.id) or held:
                blocked = sorted(set(self.gate_reasons.get(item.id, [])) | set(held))
                statuses.append(ItemStatus(item.id, item.group, "held", None, blocked, kind))
            elif not all_through and override != "pass":
                statuses.append(
                    ItemStatus(item.id, item.group, "in_review", group_stage, ["group:sister_pending"], kind)
                )
            else:
                statuses.append(ItemStatus(item.id, item.group, "admitted", None, [], kind))
        for status in statuses:  # warnings (e.g. a probe gate set to warn) are shown, never block
            status.reasons += [r for r in self.gate_warnings.get(status.id, []) if r not in status.reasons]
        return statuses


RecordsOf = Callable[[str], Mapping[str, Sequence[RecordFacts]]]
"""A subject (``item:<id>``, ``group:<id>``) -> its stored records by stage."""


def separation_records(records_of: RecordsOf, item: ItemFacts) -> MergedRecords:
    """What an item stage's separation rule reads: the item's records and its group's, by stage (stage names
    are unique across item and group stages, so the two never share a key)."""
    merged = MergedRecords((k, list(v)) for k, v in records_of(f"item:{item.id}").items())
    for stage, recs in records_of(f"group:{item.group}").items():
        merged.setdefault(stage, []).extend(recs)
    return merged


def group_separation_records(records_of: RecordsOf, group: str, sisters: Sequence[ItemFacts]) -> MergedRecords:
    """What a group stage's separation rule reads: the group's records and every live sister's, by stage."""
    merged = MergedRecords((k, list(v)) for k, v in records_of(f"group:{group}").items())
    for sister in sisters:
        for stage, recs in records_of(f"item:{sister.id}").items():
            merged.setdefault(stage, []).extend(recs)
    return merged


def open_groups(statuses: Iterable[ItemStatus], stage: str = "group_integration") -> list[str]:
    """Groups open for the group stage: every live sister passed its item stages (its answer check last) and
    waits there (design.md). Queues, UI pages and Label Studio offer a group only then; ``import reviews``
    accepts a group record at any time."""
    waiting: dict[str, bool] = {}
    for st in statuses:
        if st.state != "discarded":
            at_group = st.state == "in_review" and st.stage == stage
            waiting[st.group] = waiting.get(st.group, True) and at_group
    return sorted(group for group, ready in waiting.items() if ready)


class StatusInputs(NamedTuple):
    """Everything a status derivation reads, loaded in one session."""

    items: list[ItemFacts]
    perturbed: dict[str, str]
    records: list[RecordFacts]
    decisions: list[Decision]
    gates: list[GateResult]
    reviewers: tuple[str, ...] = ()
    """People with the reviewer role: who could staff the stages still open (``curation.staffing``)."""
    shown: Mapping[str, frozenset[str]] | None = None
    """Item -> people shown its label (exposure events); None when not loaded."""
    abilities: Abilities = NO_ABILITIES
    """The languages people read and the stages they are qualified for (``curation.abilities``)."""

    @classmethod
    def load(cls, session) -> StatusInputs:  # type: ignore[no-untyped-def]
        with collector_paused():
            items, perturbed = load_facts(session)
            return cls.completed(session, items, perturbed, load_records(session))

    @classmethod
    def completed(  # type: ignore[no-untyped-def]
        cls, session, items: list[ItemFacts], perturbed: dict[str, str], records: list[RecordFacts]
    ) -> StatusInputs:
        """These items and records with what else a derivation reads: decisions, gate results, the reviewers,
        and who was shown which item's label."""
        with collector_paused():
            decisions = list(session.execute(select(Decision)).scalars())
            gates = list(session.execute(select(GateResult)).scalars())
            people = session.execute(
                select(col(Person.name), col(Person.roles), col(Person.languages), col(Person.can))
            ).all()
            shown: dict[str, set[str]] = defaultdict(set)
            for subject, after in session.execute(
                select(col(Event.subject), col(Event.after)).where(col(Event.action) == EXPOSED)
            ):
                shown[subject.removeprefix("item:")].add((after or {}).get("person", ""))
        reviewers = tuple(sorted(name for name, roles, _, _ in people if "reviewer" in roles.split(",")))
        frozen = {item: frozenset(who) for item, who in shown.items()}
        abilities = abilities_of(session, people)
        return cls(items, perturbed, records, decisions, gates, reviewers, frozen, abilities)

    def derivation(self, ws) -> Derivation:  # type: ignore[no-untyped-def]
        """The derivation of these inputs under the workspace's review settings and gate policy."""
        return Derivation(
            ws.settings.review,
            self.items,
            self.perturbed,
            self.records,
            self.decisions,
            self.gates,
            ws.settings.gates.mode,
        )

    def staffing(self, derivation: Derivation, statuses: list[ItemStatus]) -> dict[str, StaffingGap]:
        """Items in review that the workspace's reviewers cannot finish; their ``staffing:<stage>`` reasons are
        added to ``statuses``. Nothing when the people were not loaded."""
        if self.shown is None:
            return {}
        gaps = staffing_gaps(derivation, statuses, self.reviewers, self.shown, self.abilities)
        apply_staffing(statuses, gaps)
        return gaps

    def derive(self, ws) -> list[ItemStatus]:  # type: ignore[no-untyped-def]
        """Every item's status, in id order, under the workspace's review settings and probe gate mode."""
        statuses, _ = self.derive_with_staffing(ws)
        return statuses

    def derive_with_staffing(self, ws) -> tuple[list[ItemStatus], dict[str, StaffingGap]]:  # type: ignore[no-untyped-def]
        """``derive``, and the staffing gaps it added to the statuses."""
        with collector_paused():
            derivation = self.derivation(ws)
            statuses = derivation.derive_all()
            return statuses, self.staffing(derivation, statuses)

    def about(self, groups: Collection[str], items: Collection[str]) -> StatusInputs:
        """These inputs' groups, decisions, gate results and exposures restricted to ``groups`` and their
        ``items``: what a derivation of those items alone reads besides their facts and records (the
        reviewers are everyone's)."""
        return self._replace(
            perturbed={g: p for g, p in self.perturbed.items() if g in groups},
            decisions=[d for d in self.decisions if d.item_id in items],
            gates=[g for g in self.gates if g.item_id in items],
            shown=None if self.shown is None else {i: who for i, who in self.shown.items() if i in items},
        )


def derive_status(ws) -> list[ItemStatus]:  # type: ignore[no-untyped-def]
    """Every item's status, in id order."""
    with ws.session() as s:
        inputs = StatusInputs.load(s)
    return inputs.derive(ws)


def funnel(statuses: list[ItemStatus]) -> dict[str, Any]:
    """Counts per state and per pending/failing stage, the admission rate and the commonest reasons."""
    by_state = Counter(st.state for st in statuses)
    by_stage: dict[str, Counter[str]] = {stage: Counter() for stage in stage_names()}
    for st in statuses:
        if st.stage:
            by_stage.setdefault(st.stage, Counter())[st.state] += 1
    reasons = Counter(r for st in statuses for r in st.reasons if st.state in ("returned", "held", "in_review"))
    considered = len(statuses) - by_state.get("discarded", 0)
    return {
        "total": len(statuses),
        "states": {
            state: by_state.get(state, 0) for state in ("in_review", "returned", "held", "admitted", "discarded")
        },
        "stages": {stage: dict(c) for stage, c in by_stage.items()},
        "admission_rate": round(by_state.get("admitted", 0) / considered, 4) if considered else None,
        "reasons": [{"reason": r, "count": c} for r, c in reasons.most_common()],
    }
