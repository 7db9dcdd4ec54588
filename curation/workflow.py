"""The five-stage review flow: every item's state, next stage and reasons, derived from its content,
its review records, maintainers' decisions and the stored gate results — never stored, so they cannot drift.

Rules (design.md, "Reviews, groups and gates — the rules in one place"):
- every stage that has its quorum is judged and every violated rule is reported;
- a failed rule returns the item to its author (state ``returned``, stage = first failing stage);
  group rules are judged once the item's own stages passed (listed earlier as a heads-up);
- otherwise the first stage short of its quorum is pending (``in_review``);
- a review counts only while the inputs it judged are unchanged (``inputs_hash``), so a new revision
  invalidates exactly the stages whose inputs changed;
- sisters pass group integration together; a sister not through holds the others (``group:sister_pending``);
- item-level gates turn a fully reviewed item into ``held``; non-blocking gate results (a probe gate set
  to ``warn``) are listed among the reasons without changing the state.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson
from sqlalchemy import String, select, type_coerce

from .config import ReviewSettings
from .tables import Decision, GateResult, Item, ReviewRecord, SceneGroup
from .vocab import AUDIO_AXES, CHECKLIST_VIEWS, FULL_VIEW, MODALITIES, STAGES, STRICT_VIEWS, view_name


def _digest(*parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class ItemFacts:
    """What the workflow needs of an item (loaded in bulk, without ORM objects)."""

    id: str
    group: str
    author: str
    revision: int
    context: str
    question: str
    options: dict[str, str]
    answer: str
    image: str
    audio: str
    audio_source: str
    content_hash: str

    def stage_inputs(self, stage: str) -> str:
        """Hash of what a stage judges; a review stays valid while it is unchanged."""
        text = (self.context, self.question, self.options)
        if stage == "grammar":
            return _digest("grammar", *text)
        if stage == "audio_signoff":
            return _digest("audio_signoff", self.audio, self.audio_source)
        if stage in ("subset_checklist", "answer_check"):
            return _digest(stage, *text, self.image, self.audio)
        raise ValueError(f"{stage} is not an item stage")


def group_inputs(perturbed: str, sisters: Iterable[ItemFacts]) -> str:
    """Hash of a group's content; any sister's revision invalidates group reviews."""
    return _digest("group_integration", perturbed, sorted((s.id, s.content_hash) for s in sisters))


@dataclass
class ItemStatus:
    id: str
    group: str
    state: str
    stage: str | None
    reasons: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "group": self.group, "state": self.state, "stage": self.stage, "reasons": self.reasons}


class RecordFacts(NamedTuple):
    """One review record as the derivation reads it (a tuple: 70,000 of them load in a blink)."""

    subject: str
    stage: str
    reviewer: str
    revision: int
    inputs_hash: str
    payload: Mapping[str, Any]
    id: int


@dataclass
class StageOutcome:
    """``passed`` is None while the stage lacks its quorum."""

    passed: bool | None
    reasons: list[str] = field(default_factory=list)


def combine_checklist(records: list[Mapping[str, list[str]]], rule: str) -> dict[str, set[str]]:
    """Per view, combine reviewers' consistent-option sets with ``any``, ``majority`` or ``all``."""
    combined: dict[str, set[str]] = {}
    n = len(records)
    for view in CHECKLIST_VIEWS:
        sets = [set(rec.get(view, ())) for rec in records]
        if rule == "any":
            combined[view] = set().union(*sets)
        elif rule == "all":
            combined[view] = set.intersection(*sets) if sets else set()
        else:
            counts = Counter(opt for chosen in sets for opt in chosen)
            combined[view] = {o for o, c in counts.items() if c * 2 > n}
    return combined


def well_posedness_reasons(sets: Mapping[str, set[str]], answer: str) -> list[str]:
    """TRIAD Definition 1 on per-view consistent sets; also used by the probe checker."""
    reasons: list[str] = []
    full = sets[FULL_VIEW]
    if full != {answer}:
        reasons.append("label_mismatch" if len(full) <= 1 else "underdetermined")
    reasons += [f"reducible:{view}" for view in STRICT_VIEWS if len(sets[view]) < 2]
    if full == {answer}:
        for modality in MODALITIES:
            without = view_name(set(MODALITIES) - {modality})
            if not sets[without] > full:
                reasons.append(f"not_enlarging:{modality}")
    return reasons


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


class Derivation:
    """Derives every item's status from facts loaded once; ``derive_all`` is the entry point."""

    def __init__(
        self,
        settings: ReviewSettings,
        items: list[ItemFacts],
        perturbed: Mapping[str, str],
        records: Iterable[RecordFacts],
        decisions: Iterable[Decision] = (),
        gates: Iterable[GateResult] = (),
        probe_mode: str = "off",
    ) -> None:
        self.settings = settings
        self.items = items
        self.perturbed = perturbed
        self.by_subject: dict[str, dict[str, list[RecordFacts]]] = defaultdict(lambda: defaultdict(list))
        for rec in records:
            self.by_subject[rec.subject][rec.stage].append(rec)
        self.discarded = discarded_items(decisions)
        self.overrides: dict[tuple[str, str], str] = {}
        revisions = {i.id: i.revision for i in items}
        for d in sorted(decisions, key=lambda d: (d.created_at, d.id or 0)):
            if d.kind == "override" and d.stage and d.revision == revisions.get(d.item_id):
                self.overrides[(d.item_id, d.stage)] = d.verdict or "pass"
        hashes = {i.id: i.content_hash for i in items}
        self.gate_reasons: dict[str, list[str]] = defaultdict(list)
        self.gate_warnings: dict[str, list[str]] = defaultdict(list)
        for g in gates:
            if hashes.get(g.item_id) != g.content_hash or not g.reasons:
                continue  # stale: judged an earlier content of the item
            blocking = probe_mode == "block" if g.gate == "probe" else g.blocking
            if g.gate == "probe" and probe_mode == "off":
                continue
            (self.gate_reasons if blocking else self.gate_warnings)[g.item_id].extend(g.reasons)

    # ----- per stage --------------------------------------------------------------------
    def valid_records(self, item: ItemFacts, stage: str) -> list[RecordFacts]:
        """Records still valid for the current content, the latest one per reviewer."""
        wanted = item.stage_inputs(stage)
        latest: dict[str, RecordFacts] = {}
        for rec in self.by_subject.get(f"item:{item.id}", {}).get(stage, []):
            if rec.inputs_hash != wanted or rec.reviewer == item.author:
                continue
            prior = latest.get(rec.reviewer)
            if prior is None or (rec.revision, rec.id) > (prior.revision, prior.id):
                latest[rec.reviewer] = rec
        return sorted(latest.values(), key=lambda r: r.id)

    def judge(self, item: ItemFacts, stage: str) -> StageOutcome:
        override = self.overrides.get((item.id, stage))
        if override == "pass":
            return StageOutcome(True)
        if override == "fail":
            return StageOutcome(False, [f"overridden:{stage}"])
        s = self.settings
        recs = self.valid_records(item, stage)
        if stage == "grammar":
            if any(r.payload.get("verdict") == "fail" for r in recs):
                return StageOutcome(False, ["grammar"])
            return StageOutcome(True if len(recs) >= s.grammar_quorum else None)
        if stage == "audio_signoff":
            reasons = ["tts_only_audio"] if item.audio_source == "tts" else []
            if len(recs) >= s.audio_signoff_quorum:
                for axis in AUDIO_AXES:
                    mean = sum(r.payload["scores"][axis] for r in recs) / len(recs)
                    if mean < s.audio_min_mean:
                        reasons.append(f"audio_unnatural:{axis}")
                return StageOutcome(not reasons, reasons)
            return StageOutcome(False if reasons else None, reasons)
        if stage == "subset_checklist":
            if len(recs) < s.subset_checklist_quorum:
                return StageOutcome(None)
            sets = combine_checklist([r.payload["consistent"] for r in recs], s.combine)
            reasons = well_posedness_reasons(sets, item.answer)
            return StageOutcome(not reasons, reasons)
        if stage == "answer_check":
            if any(r.payload.get("answer") != item.answer for r in recs):
                return StageOutcome(False, ["answer_check_disagrees"])
            return StageOutcome(True if len(recs) >= s.answer_check_quorum else None)
        raise ValueError(stage)

    def group_rule_reasons(self, group: str, sisters: list[ItemFacts]) -> list[str]:
        """Automatic checks across sisters (TRIAD C.2 step 6)."""
        reasons = []
        perturbed = self.perturbed[group]
        if perturbed in MODALITIES and len(sisters) > 1:
            fixed = [m for m in MODALITIES if m != perturbed]
            values = {"text": lambda i: (i.context,), "image": lambda i: (i.image,), "audio": lambda i: (i.audio,)}
            if any(len({values[m](i) for i in sisters}) > 1 for m in fixed):
                reasons.append("group:multiple_perturbed")
        exact = self.settings.group_options == "exact"
        if exact and len({json.dumps(i.options, sort_keys=True) for i in sisters}) > 1:
            reasons.append("group:option_mismatch")
        answers = [i.answer for i in sisters]
        if len(sisters) > 1:
            all_same = len(set(answers)) == 1
            some_repeat = len(set(answers)) < len(answers)
            if all_same or (self.settings.group_answers == "all_distinct" and some_repeat):
                reasons.append("group:duplicate_answers")
        if len(sisters) < self.settings.min_group_size:
            reasons.append("group:too_small")
        return reasons

    def group_review(self, group: str, sisters: list[ItemFacts]) -> StageOutcome:
        wanted = group_inputs(self.perturbed[group], sisters)
        authors = {i.author for i in sisters}
        latest: dict[str, RecordFacts] = {}
        for rec in self.by_subject.get(f"group:{group}", {}).get("group_integration", []):
            if rec.inputs_hash == wanted and rec.reviewer not in authors:
                latest[rec.reviewer] = rec
        recs = list(latest.values())
        if any(r.payload.get("verdict") == "fail" for r in recs):
            return StageOutcome(False, ["group:reviewer_fail"])
        return StageOutcome(True if len(recs) >= self.settings.group_integration_quorum else None)

    # ----- everything ------------------------------------------------------------------
    def derive_all(self) -> list[ItemStatus]:
        groups: dict[str, list[ItemFacts]] = defaultdict(list)
        for item in self.items:
            if item.id not in self.discarded:
                groups[item.group].append(item)
        item_outcome: dict[str, tuple[list[str], str | None, str | None]] = {}
        for item in self.items:
            if item.id in self.discarded:
                continue
            reasons: list[str] = []
            first_failed: str | None = None
            first_pending: str | None = None
            for stage in STAGES[:-1]:
                outcome = self.judge(item, stage)
                if outcome.passed is False:
                    reasons += outcome.reasons
                    first_failed = first_failed or stage
                elif outcome.passed is None:
                    reasons += outcome.reasons
                    first_pending = first_pending or stage
            item_outcome[item.id] = (reasons, first_failed, first_pending)
        group_state: dict[str, tuple[list[str], StageOutcome, bool]] = {}
        for group, sisters in groups.items():
            rules = self.group_rule_reasons(group, sisters)
            review = self.group_review(group, sisters)
            through = all(
                item_outcome[s.id][1] is None and item_outcome[s.id][2] is None and not self.gate_reasons.get(s.id)
                for s in sisters
            )
            group_state[group] = (rules, review, through)

        statuses = []
        for item in self.items:
            if item.id in self.discarded:
                statuses.append(ItemStatus(item.id, item.group, "discarded", None, []))
                continue
            reasons, first_failed, first_pending = item_outcome[item.id]
            rules, review, all_through = group_state[item.group]
            override = self.overrides.get((item.id, "group_integration"))
            if override == "pass":
                rules, review = [], StageOutcome(True)
            elif override == "fail":
                review = StageOutcome(False, ["overridden:group_integration"])
            if first_failed:
                reasons = reasons + rules + review.reasons
                statuses.append(ItemStatus(item.id, item.group, "returned", first_failed, reasons))
            elif first_pending:  # group rules are judged at group integration; shown early as a warning
                statuses.append(ItemStatus(item.id, item.group, "in_review", first_pending, reasons + rules))
            elif rules or review.passed is False:
                reasons = reasons + rules + review.reasons
                statuses.append(ItemStatus(item.id, item.group, "returned", "group_integration", reasons))
            elif review.passed is None:
                statuses.append(ItemStatus(item.id, item.group, "in_review", "group_integration", reasons))
            elif self.gate_reasons.get(item.id):
                statuses.append(ItemStatus(item.id, item.group, "held", None, sorted(set(self.gate_reasons[item.id]))))
            elif not all_through and override != "pass":
                statuses.append(
                    ItemStatus(item.id, item.group, "in_review", "group_integration", ["group:sister_pending"])
                )
            else:
                statuses.append(ItemStatus(item.id, item.group, "admitted", None, []))
        for status in statuses:  # warnings (e.g. a probe gate set to warn) are shown, never block
            status.reasons += [r for r in self.gate_warnings.get(status.id, []) if r not in status.reasons]
        return statuses


def load_facts(session) -> tuple[list[ItemFacts], dict[str, str]]:  # type: ignore[no-untyped-def]
    """Items as plain facts, in id order, with their groups' perturbed modality."""
    rows = session.execute(
        select(
            Item.id,
            Item.group_id,
            Item.author,
            Item.revision,
            Item.context,
            Item.question,
            Item.options,
            Item.answer,
            Item.image,
            Item.audio,
            Item.provenance,
            Item.content_hash,
        ).order_by(Item.id)
    ).all()
    items = [
        ItemFacts(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            r[8],
            r[9],
            (r[10] or {}).get("audio", {}).get("source", ""),
            r[11],
        )
        for r in rows
    ]
    perturbed = dict(session.execute(select(SceneGroup.id, SceneGroup.perturbed)).all())
    return items, perturbed


def load_records(session) -> list[RecordFacts]:  # type: ignore[no-untyped-def]
    """All review records; payloads are parsed with orjson (the bulk of the cost at 70k records)."""
    rows = session.execute(
        select(
            ReviewRecord.subject,
            ReviewRecord.stage,
            ReviewRecord.reviewer,
            ReviewRecord.revision,
            ReviewRecord.inputs_hash,
            type_coerce(ReviewRecord.payload, String),
            ReviewRecord.id,
        )
    ).all()
    loads = orjson.loads  # PostgreSQL's driver hands JSON over already parsed
    return [
        RecordFacts(r[0], r[1], r[2], r[3], r[4], r[5] if isinstance(r[5], dict) else loads(r[5]), r[6]) for r in rows
    ]


class StatusInputs(NamedTuple):
    """Everything a status derivation reads, loaded in one session."""

    items: list[ItemFacts]
    perturbed: dict[str, str]
    records: list[RecordFacts]
    decisions: list[Decision]
    gates: list[GateResult]

    @classmethod
    def load(cls, session) -> StatusInputs:  # type: ignore[no-untyped-def]
        with _collector_paused():
            items, perturbed = load_facts(session)
            records = load_records(session)
            decisions = list(session.execute(select(Decision)).scalars())
            gates = list(session.execute(select(GateResult)).scalars())
        return cls(items, perturbed, records, decisions, gates)

    def derive(self, ws) -> list[ItemStatus]:  # type: ignore[no-untyped-def]
        """Every item's status, in id order, under the workspace's review settings and probe gate mode."""
        with _collector_paused():
            return Derivation(
                ws.settings.review,
                self.items,
                self.perturbed,
                self.records,
                self.decisions,
                self.gates,
                ws.settings.gates.probe,
            ).derive_all()


def derive_status(ws) -> list[ItemStatus]:  # type: ignore[no-untyped-def]
    """Every item's status, in id order."""
    with ws.session() as s:
        inputs = StatusInputs.load(s)
    return inputs.derive(ws)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Bulk loading creates many small objects and no cycles; the cyclic collector would rescan the growing
    heap again and again (time grew 25x for 10x items), so it pauses meanwhile."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def funnel(statuses: list[ItemStatus]) -> dict[str, Any]:
    """Counts per state and per pending/failing stage, the admission rate and the commonest reasons."""
    by_state = Counter(st.state for st in statuses)
    by_stage = {stage: Counter() for stage in STAGES}
    for st in statuses:
        if st.stage:
            by_stage[st.stage][st.state] += 1
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
