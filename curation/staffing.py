"""Staffing: whether a workspace's reviewers can still fill every stage an item waits for, under the separation
rule in force (design.md, "Exposure and separation").

A pool that is too small for the rule (TRIAD's needs four reviewers besides the author) would otherwise leave
items ``in_review`` forever with nothing said. For every item in review this module plans the missing reviews
(each stage's missing quorum, in the kind's stage order, then the group stage) with the stages' own separation
rules and the blind stage's exposure, on hypothetical records appended after the stored ones. When no plan
exists, the item carries ``staffing:<stage>`` for each stage that only newcomers could fill, and the gap says
the smallest change that fixes it: how many reviewers to add, and whether ``[review] separation =
"author_only"`` alone would do.

The search is bounded (:data:`BUDGET` rule checks per plan); a search that runs out of budget says nothing
rather than raise a false alarm. Items that look alike to the rules (same author, sisters' authors, records and
exposure) share one answer.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from .abilities import NO_ABILITIES, Abilities
from .facts import ItemFacts, RecordFacts
from .kinds import GroupStage, Stage

if TYPE_CHECKING:
    from .workflow import Derivation, ItemStatus

STAFFING = "staffing"
"""Prefix of the heads-up reason ``staffing:<stage>`` on an item in review."""
BUDGET = 20_000
"""Rule checks one plan may spend before the search gives up (and stays silent)."""
NEWCOMER = "newcomer {}"
"""Name of a hypothetical added reviewer: nobody's author, unexposed, holding no role yet."""


@dataclass(frozen=True)
class StaffingGap:
    """Why an item's remaining stages cannot be staffed by the workspace's reviewers, and what would fix it."""

    item: str
    stages: tuple[str, ...]
    """The stages only added reviewers could fill (in stage order): the item's ``staffing:<stage>`` reasons."""
    add: int
    """The fewest reviewers to add (each unexposed and new to the item) for every stage to be staffable."""
    author_only: bool
    """Whether ``[review] separation = "author_only"`` would let today's reviewers staff every stage."""
    separation: str = "triad"
    """The ``[review] separation`` rule in force."""
    who: str = ""
    """What the added reviewers need besides (``who read zh``, ``qualified for answer_check``), where the
    workspace sets people's languages or qualifications."""

    @property
    def reasons(self) -> list[str]:
        return [f"{STAFFING}:{stage}" for stage in self.stages]

    def advice(self) -> str:
        """The smallest change that fixes it, in words."""
        fix = f"add {self.add} reviewer{'s' if self.add > 1 else ''}" + (f" {self.who}" if self.who else "")
        return fix + (' or allow it with [review] separation = "author_only"' if self.author_only else "")


class _OutOfBudget(Exception):
    pass


@dataclass
class _Slot:
    stage: Stage
    subject: str
    revision: int
    taken: frozenset[str]
    """Reviewers whose records already count at this stage."""


class _Planner:
    """Plans the missing reviews of one item with the given people (depth-first, people in order)."""

    def __init__(
        self,
        derivation: Derivation,
        item: ItemFacts,
        sisters: Sequence[ItemFacts],
        slots: list[_Slot],
        exposed: Collection[str],
        settings: Any,
        abilities: Abilities = NO_ABILITIES,
    ) -> None:
        self.d = derivation
        self.abilities = abilities
        self.item = item
        self.sisters = sisters
        self.slots = slots
        self.exposed = set(exposed)
        self.settings = settings
        self.spent = 0
        self.people: list[str] = []
        self.newcomers: set[str] = set()
        self.first: str | None = None

    def plan(
        self, people: Sequence[str], newcomers: Sequence[str] = (), first: str | None = None
    ) -> list[RecordFacts] | None:
        """Records that would fill every slot, in order, by ``people`` and then ``newcomers``; None if none can.
        ``first``: the person who fills the first slot (one of ``people``)."""
        self.people = [*people, *newcomers]
        self.newcomers = set(newcomers)
        self.first = first
        self.spent = 0
        top = max((r.id for recs in self.d.separation_records(self.item).values() for r in recs), default=0)
        top = max(top, *(r.id for recs in self._group_context([]).values() for r in recs), 0)
        return self._fill(0, [], top)

    def _item_context(self, extra: list[RecordFacts]) -> dict[str, list[RecordFacts]]:
        out = {k: list(v) for k, v in self.d.separation_records(self.item).items()}
        for rec in extra:
            out.setdefault(rec.stage, []).append(rec)
        return out

    def _group_context(self, extra: list[RecordFacts]) -> dict[str, list[RecordFacts]]:
        out = {k: list(v) for k, v in self.d.group_separation_records(self.item.group, self.sisters).items()}
        for rec in extra:
            out.setdefault(rec.stage, []).append(rec)
        return out

    def _allowed(self, person: str, slot: _Slot, extra: list[RecordFacts]) -> bool:
        self.spent += 1
        if self.spent > BUDGET:
            raise _OutOfBudget
        if self.abilities.active and person not in self.newcomers:
            items = [s.id for s in self.sisters] if isinstance(slot.stage, GroupStage) else [self.item.id]
            if not self.abilities.allows(person, slot.stage.name, items):
                return False
        if isinstance(slot.stage, GroupStage):
            rule = slot.stage.group_separation_rule(self.settings)
            return rule(person, self.item.group, self.sisters, self._group_context(extra)) is None
        if slot.stage.blind and (
            person in self.exposed or any(r.subject.startswith("group:") and r.reviewer == person for r in extra)
        ):
            return False
        return slot.stage.separation_rule(self.settings)(person, self.item, self._item_context(extra)) is None

    def _fill(self, index: int, extra: list[RecordFacts], top: int) -> list[RecordFacts] | None:
        if index == len(self.slots):
            return extra
        slot = self.slots[index]
        here = slot.taken | {r.reviewer for r in extra if r.stage == slot.stage.name and r.subject == slot.subject}
        newcomers_used = {r.reviewer for r in extra if r.reviewer in self.newcomers}
        first_unused = True
        candidates = self.people if index or self.first is None else [self.first]
        for person in candidates:
            if person in here:
                continue
            if person in self.newcomers and person not in newcomers_used:
                if not first_unused:
                    continue  # newcomers are interchangeable: try only the first one not yet used
                first_unused = False
            if not self._allowed(person, slot, extra):
                continue
            # a hypothetical record: separation rules read who recorded what where, never the inputs or payload
            rec = RecordFacts(slot.subject, slot.stage.name, person, slot.revision, "", {}, top + 1)
            found = self._fill(index + 1, [*extra, rec], top + 1)
            if found is not None:
                return found
        return None


def _slots(
    d: Derivation, item: ItemFacts, sisters: Sequence[ItemFacts], group_slots: dict[str, list[_Slot]]
) -> list[_Slot]:
    """One slot per missing review of each pending stage, item stages in order, then the group stages
    (``group_slots`` caches a group's, which its sisters share)."""
    settings = d.settings
    slots: list[_Slot] = []
    kind = d.kind(item)
    for name in d.pending.get(item.id, []):
        stage = kind.stage(name)
        taken = frozenset(r.reviewer for r in d.valid_records(item, stage))
        need = stage.quorum(settings) - len(taken)
        slots += [_Slot(stage, f"item:{item.id}", item.revision, taken)] * max(0, need)
    if item.group not in group_slots:
        group_slots[item.group] = []
        for gs in kind.group_stages:
            recs = d.group_records(item.group, sisters, gs)
            if gs.judge_group(recs, settings).passed is not None:
                continue
            taken = frozenset(r.reviewer for r in recs)
            need = gs.quorum(settings) - len(taken)
            group_slots[item.group] += [_Slot(gs, f"group:{item.group}", 0, taken)] * max(0, need)
    return slots + group_slots[item.group]


def staffing_gaps(
    d: Derivation,
    statuses: Sequence[ItemStatus],
    reviewers: Sequence[str],
    shown: Mapping[str, Collection[str]],
    abilities: Abilities = NO_ABILITIES,
) -> dict[str, StaffingGap]:
    """The staffing gap of every item in review that today's ``reviewers`` cannot finish (``shown``: item ->
    people shown its label by a page, an export or a project; ``abilities``: who reads what, who may do which
    stage)."""
    plans = _Plans(d, reviewers, shown, abilities)
    gaps: dict[str, StaffingGap] = {}
    for st in statuses:
        if st.state != "in_review" or st.id not in plans.facts:
            continue
        found = plans.gap(plans.facts[st.id])
        if found is not None:
            gaps[st.id] = found
    return gaps


class _Plans:
    """Plans of a derivation's items with today's reviewers; items that look alike to the rules (same author,
    sisters' authors, records, exposure and languages) share one answer."""

    def __init__(
        self,
        d: Derivation,
        reviewers: Sequence[str],
        shown: Mapping[str, Collection[str]],
        abilities: Abilities,
    ) -> None:
        self.d, self.shown, self.abilities = d, shown, abilities
        self.people = sorted(set(reviewers))
        self.everyone = set(self.people)
        self.sisters_of: dict[str, list[ItemFacts]] = {}
        for item in d.items:
            if item.id not in d.discarded:
                self.sisters_of.setdefault(item.group, []).append(item)
        self.facts = {i.id: i for i in d.items}
        self.cache: dict[Any, Any] = {}
        self.group_slots: dict[str, list[_Slot]] = {}
        self.of_group: dict[str, tuple[set[str], tuple[str, ...], _Shape, tuple[str, ...]]] = {}
        """Group -> what its sisters share: who is exposed by the group (its authors, its group reviewers), its
        authors, the shape of what its group stage's separation rule reads, and today's reviewers among the
        exposed."""

    def _setup(self, item: ItemFacts) -> tuple[list[ItemFacts], list[_Slot], set[str], tuple[Any, ...]]:
        """The item's live sisters, its missing reviews, who is exposed to its label, and the key of its plan."""
        d = self.d
        sisters = self.sisters_of.get(item.group, [item])
        slots = _slots(d, item, sisters, self.group_slots)
        shared = self.of_group.get(item.group)
        if shared is None:
            group_recs = d.subject_records(f"group:{item.group}")
            context = d.group_separation_records(item.group, sisters)
            by_group = {s.author for s in sisters} | {r.reviewer for recs in group_recs.values() for r in recs}
            shared = self.of_group[item.group] = (
                by_group,
                tuple(sorted({s.author for s in sisters})),
                _shape(sorted((r for recs in context.values() for r in recs), key=lambda r: r.id)),
                tuple(sorted(by_group & self.everyone)),
            )
        seen = self.shown.get(item.id)
        exposed = shared[0] | set(seen) if seen else shared[0]  # the planner copies it
        language = self.abilities.item_language
        key = (
            item.kind,
            item.author,
            shared[1],
            tuple((s.stage.name, s.taken) for s in slots),
            shared[2].records,
            shared[2].first.get(f"item:{item.id}"),
            shared[2].first.get(f"group:{item.group}"),
            tuple(sorted(exposed & self.everyone)) if seen else shared[3],
            (language.get(item.id), tuple(language.get(s.id) for s in sisters)) if language else None,
        )
        return sisters, slots, exposed, key

    def gap(self, item: ItemFacts) -> StaffingGap | None:
        """The item's staffing gap, or None when today's reviewers can finish it (or the search gave up)."""
        sisters, slots, exposed, key = self._setup(item)
        if not slots:
            return None
        if key not in self.cache:
            self.cache[key] = _gap(self.d, item, sisters, slots, exposed, self.people, self.abilities)
        found = self.cache[key]
        return None if found is None else replace(found, item=item.id)

    def keeps_staffable(self, item: ItemFacts, stage: str, person: str) -> bool:
        """Whether PERSON recording STAGE of ITEM next leaves every later review of it staffable: False only
        when a plan exists without them there and none exists with them (an item already short of people,
        or a search out of budget, says nothing)."""
        sisters, slots, exposed, key = self._setup(item)
        if not slots or slots[0].stage.name != stage or person not in self.everyone:
            return True
        whole = ("keeps", person, key)
        if whole not in self.cache:
            planner = _Planner(self.d, item, sisters, slots, exposed, self.d.settings, self.abilities)
            try:
                self.cache[whole] = planner.plan(self.people, first=person) is not None or (
                    planner.plan(self.people) is None
                )
            except _OutOfBudget:
                self.cache[whole] = True
        return bool(self.cache[whole])


class StaffingCheck:
    """What a queue asks before offering an entry: would this person taking it leave a later stage of the item
    unstaffable (design.md, "Work distribution")? Built once per derivation and shared by the queues."""

    def __init__(
        self,
        d: Derivation,
        reviewers: Sequence[str],
        shown: Mapping[str, Collection[str]],
        abilities: Abilities = NO_ABILITIES,
    ) -> None:
        self._plans = _Plans(d, reviewers, shown, abilities)

    def keeps_staffable(self, item: ItemFacts, stage: str, person: str) -> bool:
        return self._plans.keeps_staffable(item, stage, person)

    def later_stages(self, item: ItemFacts, stage: str) -> list[str]:
        """The stages after STAGE that the item still waits for (what taking it could leave unstaffed)."""
        _, slots, _, _ = self._plans._setup(item)
        return list(dict.fromkeys(s.stage.name for s in slots if s.stage.name != stage))


class _Shape(NamedTuple):
    """The records as the separation rules see them, without ids or names of subjects: their order, each one's
    stage, reviewer and subject (numbered by first appearance). With the numbers of the item's own subject and
    of its group's, it tells which items are reviewed alike and so share one plan."""

    records: tuple[tuple[int, str, str], ...]
    first: dict[str, int]
    """Subject -> its number."""


def _shape(records: Sequence[RecordFacts]) -> _Shape:
    """The shape of a group's records, by record id."""
    first: dict[str, int] = {}
    out = []
    for rec in records:
        number = first.get(rec.subject)
        if number is None:
            number = first[rec.subject] = len(first)
        out.append((number, rec.stage, rec.reviewer))
    return _Shape(tuple(out), first)


def _gap(
    d: Derivation,
    item: ItemFacts,
    sisters: Sequence[ItemFacts],
    slots: list[_Slot],
    exposed: Collection[str],
    people: list[str],
    abilities: Abilities = NO_ABILITIES,
) -> StaffingGap | None:
    planner = _Planner(d, item, sisters, slots, exposed, d.settings, abilities)
    try:
        if planner.plan(people) is not None:
            return None
        plan: list[RecordFacts] | None = None
        newcomers: list[str] = []
        while plan is None and len(newcomers) < len(slots):
            newcomers.append(NEWCOMER.format(len(newcomers) + 1))
            plan = planner.plan(people, newcomers)
    except _OutOfBudget:
        return None
    if plan is None:
        return None
    stages = tuple(dict.fromkeys(r.stage for r in plan if r.reviewer in planner.newcomers))
    author_only = False
    if d.settings.separation != "author_only":
        loose = _Planner(
            d, item, sisters, slots, exposed, d.settings.model_copy(update={"separation": "author_only"}), abilities
        )
        try:
            author_only = loose.plan(people) is not None
        except _OutOfBudget:
            author_only = False
    return StaffingGap(
        item.id, stages, len(newcomers), author_only, d.settings.separation, _who(abilities, item, stages)
    )


def _who(abilities: Abilities, item: ItemFacts, stages: Sequence[str]) -> str:
    """What reviewers added to fill STAGES of ITEM must read or be qualified for (newcomers are planned as able
    to do anything, so the advice says it)."""
    needs = []
    language = abilities.item_language.get(item.id) if abilities.reads else None
    if language:
        needs.append(f"who read {language}")
    qualified = [stage for stage in stages if stage in abilities.qualified_stages]
    if qualified:
        needs.append(f"qualified for {', '.join(qualified)}")
    return " and ".join(needs)


def apply_staffing(statuses: Sequence[ItemStatus], gaps: Mapping[str, StaffingGap]) -> None:
    """Add each gap's ``staffing:<stage>`` reasons to its item's status (a heads-up: the state stays)."""
    for st in statuses:
        gap = gaps.get(st.id)
        if gap is not None:
            st.reasons += [r for r in gap.reasons if r not in st.reasons]


def summary(gaps: Mapping[str, StaffingGap]) -> list[dict[str, Any]]:
    """Gaps grouped by stage and fix, most items first: what status, funnel and dashboard print."""
    rows: dict[tuple[str, str, str], list[str]] = {}
    for gap in gaps.values():
        for stage in gap.stages:
            rows.setdefault((stage, gap.advice(), gap.separation), []).append(gap.item)
    return [
        {"reason": f"{STAFFING}:{stage}", "stage": stage, "items": sorted(items), "fix": fix, "separation": rule}
        for (stage, fix, rule), items in sorted(rows.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]


def describe(row: Mapping[str, Any]) -> str:
    """One line for a person: how many items cannot be staffed at which stage, and the fix."""
    n = len(row["items"])
    rule = f'[review] separation = "{row["separation"]}"'
    return (
        f"{row['reason']}: {n} item{'s' if n != 1 else ''} cannot be staffed at {row['stage']} by this "
        f"workspace's reviewers under {rule}; {row['fix']}"
    )
