"""Recording reviews: parsing a file of them, checking each against the workspace (stage, reviewer, separation,
exposure, stale content) and storing all or nothing; withdrawing them. Queues are ``curation.review_queues``,
a maintainer's decisions ``curation.decisions``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from sqlalchemy import select
from sqlmodel import col

from .bulk import collector_paused
from .db import insert_rows
from .errors import Problem, ValidationFailed
from .exposure import exposure_refusal, exposures
from .fact_loading import load_facts, load_records
from .facts import ItemFacts, RecordFacts
from .jsonl import read_jsonl, validate_line
from .kinds import GroupStage, Stage, kind_of, stage_named, stage_names
from .reservations import release_in
from .schema import GroupReview, ItemReviewIn, ReviewIn
from .tables import Event, Person, ReviewRecord, utcnow
from .workflow import group_separation_records, live_sisters, separation_records
from .workspace import Workspace, event_row, record_event


@dataclass
class ReviewReport:
    recorded: int = 0
    replaced: int = 0
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)

    def summary(self) -> str:
        return f"{self.recorded} recorded, {self.replaced} replaced, {self.unchanged} unchanged"


@dataclass
class PendingReview:
    """A parsed review record and the line it came from (0 when it came from the UI or Label Studio).

    ``seen`` is what its reviewer saw, when the record names it: the item's revision (item stages) or the
    group's content hash (group stages). A record against content that changed since is refused
    (``stale:<stage>``); without it the record counts against the content as it is now.
    """

    line: int
    review: ReviewIn
    seen: int | str | None = None


SEEN_FIELDS = ("revision", "content")
"""Optional fields of a review line naming what its reviewer saw; not part of any stage's record model."""


def split_seen(obj: dict[str, Any]) -> tuple[dict[str, Any], int | str | None, list[tuple[str, str]]]:
    """The record without its ``revision``/``content`` field, what that field names, and ``(field, problem)``s.

    ``revision`` is a whole number from 1 (the item revision shown); ``content`` a group's content hash.
    """
    rest = {k: v for k, v in obj.items() if k not in SEEN_FIELDS}
    problems: list[tuple[str, str]] = []
    seen: int | str | None = None
    if "revision" in obj:
        value = obj["revision"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(("revision", f"must be a whole number from 1 (the item revision you saw), not {value!r}"))
        else:
            seen = value
    if "content" in obj:
        value = obj["content"]
        if not isinstance(value, str) or not value.strip():
            problems.append(("content", "must be the content hash of the group you saw (a non-empty string)"))
        elif seen is not None:
            problems.append(("content", "name either the revision (an item) or the content (a group), not both"))
        else:
            seen = value.strip()
    return rest, seen, problems


def _payload(review: ReviewIn) -> dict[str, Any]:  # optional fields left out (tags, attestations) stay out
    data = review.model_dump(mode="json", exclude={"item", "group", "stage", "reviewer"})
    return {k: v for k, v in data.items() if v is not None or k not in ("ambiguous", "exclusions")}


def parse_reviews(path: Path) -> tuple[list[PendingReview], list[Problem]]:
    file = str(path)
    pending: list[PendingReview] = []
    problems: list[Problem] = []
    first: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}
    for number, obj in read_jsonl(path):
        if isinstance(obj, Problem):
            problems.append(obj)
            continue
        stage = obj.get("stage")
        found = stage_named(stage) if isinstance(stage, str) else None
        if found is None:
            problems.append(
                Problem(f"unknown stage {stage!r}; stages are {', '.join(stage_names())}", "stage", number, file)
            )
            continue
        record, seen, seen_problems = split_seen(obj)
        problems += [Problem(message, name, number, file) for name, message in seen_problems]
        parsed = validate_line(found.record_model, record, file, number)
        if isinstance(parsed, list):
            problems.extend(parsed)
            continue
        if seen_problems:
            continue
        key = (
            getattr(parsed, "item", None) or getattr(parsed, "group", None),
            stage,
            getattr(parsed, "reviewer", None),
        )
        earlier = first.setdefault(key, (number, parsed.model_dump()))
        if earlier[0] != number and earlier[1] != parsed.model_dump():  # the later would win silently
            problems.append(
                Problem(
                    f"contradicts line {earlier[0]} (same {key[0]}, stage and reviewer); keep one of the two",
                    "reviewer",
                    number,
                    file,
                )
            )
            continue
        pending.append(PendingReview(number, parsed, seen))  # type: ignore[arg-type]
    return pending, problems


def record_reviews(
    ws: Workspace,
    reviews: list[PendingReview],
    file: str = "",
    source: str = "import",
    parse_problems: list[Problem] | None = None,
    needed_only: bool = False,
) -> ReviewReport:
    """Validate against the workspace and store all records in one transaction, or none; ``parse_problems``
    (lines that did not parse) are reported with the workspace's findings on the others.

    ``needed_only`` (a person's submission from a page or a Label Studio pull): a record is refused
    (``no_longer_needed:<stage>``) when its stage already holds its quorum of records from others on the same
    content, judged in this transaction, so that people who submit at once never store more than the quorum.
    An import takes every record. A stored record releases its reviewer's reservation of the entry.

    Besides roles and fields, every record passes its stage's separation rule (in force under ``[review]
    separation``), and a blind stage's record is refused from a person exposed to the item's label. The
    records of one batch count in their order: a record is judged against the stored ones and those before it.
    """
    report = ReviewReport()
    settings = ws.settings.review
    with collector_paused(), ws.writing() as s:  # a bulk step: see curation.bulk
        items, perturbed = load_facts(s)
        by_id = {i.id: i for i in items}
        sisters = live_sisters(s)
        people = {p.name: p for p in s.execute(select(Person)).scalars()}
        problems: list[Problem] = list(parse_problems or [])
        targets: list[tuple[PendingReview, Stage, str, int, str, dict[str, Any]]] = []
        for p in reviews:
            r = p.review
            reviewer = people.get(r.reviewer)
            where: dict[str, Any] = {"line": p.line, "file": file}
            if reviewer is None:
                problems.append(
                    Problem(f"unknown person {r.reviewer!r} (`curate people list` lists them)", "reviewer", **where)
                )
                continue
            if "reviewer" not in reviewer.role_set:
                problems.append(Problem(f"{reviewer.name!r} does not have the reviewer role", "reviewer", **where))
                continue
            stage = stage_named(r.stage)
            assert stage is not None  # parse_reviews chose the model by the stage
            if isinstance(stage, GroupStage):
                group = cast(GroupReview, r).group  # a group stage's record names a group
                members = sisters.get(group)
                if not members:
                    problems.append(Problem(f"unknown group {group!r}", "group", **where))
                    continue
                if stage.name not in kind_of(members[0].kind).stage_names:
                    problems.append(Problem(f"group {group!r} has no stage {r.stage!r}", "stage", **where))
                    continue
                inputs = stage.group_inputs(perturbed[group], members)
                stale = _stale_group(p.seen, r.stage, group, inputs)
                if stale:
                    problems.append(Problem(stale, "content", **where))
                    continue
                targets.append((p, stage, f"group:{group}", 0, inputs, where))
                continue
            item_id = cast(ItemReviewIn, r).item  # an item stage's record names an item
            item = by_id.get(item_id)
            if item is None:
                problems.append(Problem(f"unknown item {item_id!r} (`curate status` lists the items)", "item", **where))
                continue
            if stage.name not in kind_of(item.kind).stage_names or not stage.applies(item):
                problems.append(
                    Problem(f"stage {r.stage!r} does not apply to {item.id!r} ({item.kind})", "stage", **where)
                )
                continue
            stale = _stale_item(p.seen, r.stage, item)
            if stale:
                problems.append(Problem(stale, "revision", **where))
                continue
            wrong = [*stage.record_problems(r, item), *stage.settings_problems(r, settings)]
            problems += [Problem(message, field_, **where) for field_, message in wrong]
            targets.append((p, stage, f"item:{item.id}", item.revision, stage.inputs(item), where))
        subjects = {subject for _, _, subject, _, _, _ in targets}
        existing = _existing_records(s, subjects)
        context = _BatchRecords(s, targets, by_id, sisters)
        blind_items = [subject[5:] for _, stage, subject, _, _, _ in targets if stage.blind]
        seen = exposures(s, blind_items) if blind_items else {}
        resolved: list[tuple[PendingReview, str, int, str]] = []
        for (p, stage, subject, revision, inputs, where), virtual_id in zip(targets, context.ids, strict=True):
            r = p.review
            kind, _, ident = subject.partition(":")
            if kind == "group":
                assert isinstance(stage, GroupStage)
                members = sisters[ident]
                refusal = stage.group_separation_rule(settings)(
                    r.reviewer, ident, members, group_separation_records(context.upto(virtual_id), ident, members)
                )
            else:
                item = by_id[ident]
                refusal = stage.separation_rule(settings)(
                    r.reviewer, item, separation_records(context.upto(virtual_id), item)
                )
                prior = existing.get((subject, r.stage, r.reviewer, revision))
                unchanged = prior is not None and prior.payload == _payload(r) and prior.inputs_hash == inputs
                if refusal is None and stage.blind and not unchanged:
                    refusal = exposure_refusal(seen.get(ident, []), r.reviewer, ident) or context.group_review_before(
                        r.reviewer, item, virtual_id
                    )
            if refusal is None and needed_only:
                refusal = _no_longer_needed(context, stage, subject, r.reviewer, inputs, virtual_id, settings)
            if refusal:
                problems.append(Problem(refusal, "reviewer", **where))
                continue
            resolved.append((p, subject, revision, inputs))
        if problems:
            problems.sort(key=lambda p: p.line or 0)
            raise ValidationFailed(
                problems, f"{len(problems)} problem(s) in {file or 'the reviews'}; nothing was recorded"
            )
        added: dict[tuple[str, str, str, int], dict[str, Any]] = {}
        """New records of this batch, as rows (one bulk write: an ORM object each cost more than the database)."""
        events: list[dict[str, Any]] = []
        for p, subject, revision, inputs in resolved:
            r = p.review
            payload = _payload(r)
            key = (subject, r.stage, r.reviewer, revision)
            prior = existing.get(key)
            row = added.get(key)
            if prior is None and row is None:
                now = utcnow()
                added[key] = dict(
                    subject=subject,
                    stage=key[1],
                    reviewer=key[2],
                    revision=revision,
                    inputs_hash=inputs,
                    payload=payload,
                    source=source,
                    created_at=now,
                    updated_at=now,
                )
                events.append(
                    event_row(
                        key[2], "review.recorded", subject, None, {"stage": key[1], "revision": revision, **payload}
                    )
                )
                report.recorded += 1
            elif row is not None:  # recorded earlier in this batch
                if row["payload"] == payload and row["inputs_hash"] == inputs:
                    report.unchanged += 1
                    continue
                events.append(
                    event_row(
                        key[2],
                        "review.replaced",
                        subject,
                        {"stage": key[1], **row["payload"]},
                        {"stage": key[1], **payload},
                    )
                )
                row.update(payload=payload, inputs_hash=inputs, source=source, updated_at=utcnow())
                report.replaced += 1
            elif prior is not None and prior.payload == payload and prior.inputs_hash == inputs:
                report.unchanged += 1
            elif prior is not None:
                before = {"stage": prior.stage, **prior.payload}
                prior.payload = payload
                prior.inputs_hash = inputs
                prior.source = source
                prior.updated_at = utcnow()
                s.add(prior)
                events.append(event_row(key[2], "review.replaced", subject, before, {"stage": key[1], **payload}))
                report.replaced += 1
        insert_rows(s, ReviewRecord, list(added.values()))
        insert_rows(s, Event, events)
        for p, subject, _, _ in resolved:
            release_in(s, p.review.reviewer, p.review.stage, subject)
    return report


NO_LONGER_NEEDED = "no_longer_needed"
"""Prefix of the refusal of a submission its stage no longer needs (its quorum was reached meanwhile)."""


def _no_longer_needed(  # type: ignore[no-untyped-def]
    context: _BatchRecords, stage: Stage, subject: str, reviewer: str, inputs: str, virtual_id: int, settings
) -> str | None:
    """The refusal of REVIEWER's record when STAGE already holds its quorum of others' records on the same
    content (stored ones, and this batch's before it); None when it still needs theirs, or replaces their own.
    It names no other reviewer and no answer: blind means blind."""
    records = context.upto(virtual_id)(subject).get(stage.name, [])
    current = [r for r in records if r.inputs_hash == inputs and r.id != virtual_id]
    if any(r.reviewer == reviewer for r in current):
        return None
    quorum = stage.quorum(settings)
    if len({r.reviewer for r in current}) < quorum:
        return None
    ident = subject.partition(":")[2]
    return (
        f"{NO_LONGER_NEEDED}:{stage.name}: {ident} no longer needs your {stage.name} record: the stage has the "
        f"{quorum} it takes; nothing was recorded"
    )


def _stale_item(seen: int | str | None, stage: str, item: ItemFacts) -> str | None:
    """Why a record made on revision ``seen`` of ITEM cannot count now (None when it can, or names none)."""
    if seen is None or seen == item.revision:
        return None
    if not isinstance(seen, int):
        return f"an item record names the revision its reviewer saw (a number), not {seen!r}"
    if seen > item.revision:
        return f"{item.id!r} has no revision {seen} (it is at revision {item.revision})"
    return (
        f"stale:{stage}: {item.id!r} changed since its reviewer saw it (revision {seen}, now {item.revision}); "
        "nothing was recorded: review the new content"
    )


def _stale_group(seen: int | str | None, stage: str, group: str, inputs: str) -> str | None:
    """Why a record made on group content ``seen`` cannot count now (None when it can, or names none)."""
    if seen is None or seen == inputs:
        return None
    if not isinstance(seen, str):
        return f"a group record names the content hash its reviewer saw, not a revision ({seen!r})"
    return (
        f"stale:{stage}: a sister of group {group!r} changed since its reviewer saw the group; nothing was "
        "recorded: review the group again"
    )


class _BatchRecords:
    """The stored records of a batch's subjects (items, their groups, groups' sisters) and the batch's own.

    The batch's records get ids after every stored one, in batch order, so that separation rules, which let a
    person's first record decide their role, judge each record against the stored ones and those before it.
    """

    def __init__(self, s, targets, by_id, sisters) -> None:  # type: ignore[no-untyped-def]
        wanted: set[str] = set()
        for _, _, subject, _, _, _ in targets:
            kind, _, ident = subject.partition(":")
            if kind == "item":
                wanted |= {subject, f"group:{by_id[ident].group}"}
            else:
                wanted |= {subject} | {f"item:{m.id}" for m in sisters[ident]}
        self.stored = _stored_records(s, sorted(wanted))
        top = max((r.id for recs in self.stored.values() for rr in recs.values() for r in rr), default=0)
        self.batch: dict[str, list[RecordFacts]] = {}
        self.ids: list[int] = []
        for offset, (p, _, subject, revision, inputs, _) in enumerate(targets, start=1):
            self.ids.append(top + offset)
            rec = RecordFacts(subject, p.review.stage, p.review.reviewer, revision, inputs, {}, top + offset)
            self.batch.setdefault(subject, []).append(rec)

    def upto(self, virtual_id: int) -> Callable[[str], dict[str, list[RecordFacts]]]:
        """A subject's records by stage: the stored ones and the batch's up to (and with) ``virtual_id``."""

        def records_of(subject: str) -> dict[str, list[RecordFacts]]:
            out = {stage: list(recs) for stage, recs in self.stored.get(subject, {}).items()}
            for rec in self.batch.get(subject, ()):
                if rec.id <= virtual_id:
                    out.setdefault(rec.stage, []).append(rec)
            return out

        return records_of

    def group_review_before(self, reviewer: str, item: ItemFacts, virtual_id: int) -> str | None:
        """An exposure by a group record of the item's group earlier in this batch (stored ones are known)."""
        for rec in self.batch.get(f"group:{item.group}", ()):
            if rec.id < virtual_id and rec.reviewer == reviewer:
                return (
                    f"exposed:group_review: {reviewer!r} reviews group {item.group!r} earlier in this batch and so "
                    f"knows the label of {item.id!r}; a blind check needs someone who has not"
                )
        return None


@dataclass(frozen=True)
class Withdrawal:
    """A record whose evidence is gone (its annotation deleted, or edited into something refused)."""

    subject: str
    stage: str
    reviewer: str
    inputs_hash: str
    reason: str


def withdraw_reviews(ws: Workspace, withdrawals: list[Withdrawal], source: str) -> int:
    """Delete the records ``source`` made for these (subject, stage, reviewer, inputs), each as an event.

    A record another source has since replaced (an import after a Label Studio pull) is left alone: only
    what ``source`` recorded is withdrawn. Returns how many records were withdrawn.
    """
    withdrawn = 0
    with ws.writing() as s:
        existing = _existing_records(s, {w.subject for w in withdrawals})
        by_slot: dict[tuple[str, str, str, str], list[ReviewRecord]] = {}
        for rec in existing.values():
            by_slot.setdefault((rec.subject, rec.stage, rec.reviewer, rec.inputs_hash), []).append(rec)
        for w in withdrawals:
            for rec in by_slot.pop((w.subject, w.stage, w.reviewer, w.inputs_hash), []):
                if rec.source != source:
                    continue
                record_event(
                    s,
                    w.reviewer,
                    "review.withdrawn",
                    w.subject,
                    {"stage": w.stage, "revision": rec.revision, **rec.payload},
                    {"stage": w.stage, "source": source, "reason": w.reason},
                )
                s.delete(rec)
                withdrawn += 1
    return withdrawn


def _existing_records(s, subjects: set[str]) -> dict[tuple[str, str, str, int], ReviewRecord]:  # type: ignore[no-untyped-def]
    """Stored records of these subjects, keyed as the uniqueness constraint is (one query per 500)."""
    out: dict[tuple[str, str, str, int], ReviewRecord] = {}
    ordered = sorted(subjects)
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        for rec in s.scalars(select(ReviewRecord).where(col(ReviewRecord.subject).in_(chunk))):
            out[(rec.subject, rec.stage, rec.reviewer, rec.revision)] = rec
    return out


class StageGuard:
    """Whether a person may record at one stage now: its separation rule in force and, at a blind stage,
    exposure. Loaded once, asked per annotation (the Label Studio pull refuses one annotation, not the pull)."""

    def __init__(self, ws: Workspace, stage: Stage) -> None:
        self.stage = stage
        self.settings = ws.settings.review
        with ws.session() as s:
            items, _ = load_facts(s)
            self.sisters = live_sisters(s)
            self.by_id = {i.id: i for i in items}
            self.records: dict[str, dict[str, list[RecordFacts]]] = {}
            for rec in load_records(s):
                self.records.setdefault(rec.subject, {}).setdefault(rec.stage, []).append(rec)
            self.seen = exposures(s) if stage.blind else {}

    def _records_of(self, subject: str) -> dict[str, list[RecordFacts]]:
        return self.records.get(subject, {})

    def refusal(self, reviewer: str, subject: str) -> str | None:
        kind, _, ident = subject.partition(":")
        if kind == "group":
            assert isinstance(self.stage, GroupStage)
            members = self.sisters.get(ident, [])
            context = group_separation_records(self._records_of, ident, members)
            return self.stage.group_separation_rule(self.settings)(reviewer, ident, members, context)
        item = self.by_id[ident]
        found = self.stage.separation_rule(self.settings)(reviewer, item, separation_records(self._records_of, item))
        inputs = self.stage.inputs(item)
        answered = any(
            r.reviewer == reviewer and r.inputs_hash == inputs
            for r in self._records_of(subject).get(self.stage.name, [])
        )
        if found is None and self.stage.blind and not answered:  # answered blind before being shown the label
            found = exposure_refusal(self.seen.get(ident, []), reviewer, ident)
        return found


def import_reviews(ws: Workspace, path: Path) -> ReviewReport:
    """Parse every line, check the parsed ones against the workspace, and report all problems at once."""
    pending, problems = parse_reviews(path)
    return record_reviews(ws, pending, str(path), parse_problems=problems)


def _stored_records(s, subjects: list[str]) -> dict[str, dict[str, list[RecordFacts]]]:  # type: ignore[no-untyped-def]
    found: dict[str, dict[str, list[RecordFacts]]] = {}
    for start in range(0, len(subjects), 500):
        chunk = subjects[start : start + 500]
        for rec in s.scalars(select(ReviewRecord).where(col(ReviewRecord.subject).in_(chunk))):
            found.setdefault(rec.subject, {}).setdefault(rec.stage, []).append(
                RecordFacts(rec.subject, rec.stage, rec.reviewer, rec.revision, rec.inputs_hash, rec.payload, rec.id)
            )
    return found
