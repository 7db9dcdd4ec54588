"""Recording reviews and maintainers' decisions; review queues; item history."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from sqlalchemy import select
from sqlmodel import col

from .errors import NotFoundError, PermissionDenied, Problem, ValidationFailed
from .facts import RecordFacts
from .jsonl import read_jsonl, validate_line
from .kinds import GroupStage, kind_of, stage_named, stage_names
from .schema import GroupReview, ItemReviewIn, ReviewIn
from .tables import Decision, Event, Item, Person, ReviewRecord, utcnow
from .workflow import derive_status, live_sisters, load_facts
from .workspace import Workspace, record_event


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
    """A parsed review record and the line it came from (0 when it came from the UI or Label Studio)."""

    line: int
    review: ReviewIn


def _payload(review: ReviewIn) -> dict[str, Any]:
    data = review.model_dump(mode="json")
    for key in ("item", "group", "stage", "reviewer"):
        data.pop(key, None)
    if data.get("ambiguous", "") is None:
        del data["ambiguous"]  # optional: a record without tags stays what it was
    return data


def parse_reviews(path: Path) -> tuple[list[PendingReview], list[Problem]]:
    file = str(path)
    pending: list[PendingReview] = []
    problems: list[Problem] = []
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
        parsed = validate_line(found.record_model, obj, file, number)
        if isinstance(parsed, list):
            problems.extend(parsed)
        else:
            pending.append(PendingReview(number, parsed))  # type: ignore[arg-type]
    return pending, problems


def record_reviews(
    ws: Workspace,
    reviews: list[PendingReview],
    file: str = "",
    source: str = "import",
    parse_problems: list[Problem] | None = None,
) -> ReviewReport:
    """Validate against the workspace and store all records in one transaction, or none; ``parse_problems``
    (lines that did not parse) are reported with the workspace's findings on the others."""
    report = ReviewReport()
    with ws.writing() as s:
        items, perturbed = load_facts(s)
        by_id = {i.id: i for i in items}
        sisters = live_sisters(s)
        people = {p.name: p for p in s.execute(select(Person)).scalars()}
        records_of = _records_by_stage(s, reviews, by_id, sisters)
        problems: list[Problem] = list(parse_problems or [])
        resolved: list[tuple[PendingReview, str, int, str]] = []
        for p in reviews:
            r = p.review
            reviewer = people.get(r.reviewer)
            where: dict[str, Any] = {"line": p.line, "file": file}
            if reviewer is None:
                problems.append(Problem(f"unknown person {r.reviewer!r}", "reviewer", **where))
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
                refusal = stage.group_separation(reviewer.name, group, members, records_of(f"group:{group}"))
                if refusal:
                    problems.append(Problem(refusal, "reviewer", **where))
                    continue
                resolved.append((p, f"group:{group}", 0, stage.group_inputs(perturbed[group], members)))
                continue
            item_id = cast(ItemReviewIn, r).item  # an item stage's record names an item
            item = by_id.get(item_id)
            if item is None:
                problems.append(Problem(f"unknown item {item_id!r}", "item", **where))
                continue
            if stage.name not in kind_of(item.kind).stage_names or not stage.applies(item):
                problems.append(
                    Problem(f"stage {r.stage!r} does not apply to {item.id!r} ({item.kind})", "stage", **where)
                )
                continue
            refusal = stage.separation(reviewer.name, item, records_of(f"item:{item.id}"))
            if refusal:
                problems.append(Problem(refusal, "reviewer", **where))
                continue
            problems += [Problem(message, field_, **where) for field_, message in stage.record_problems(r, item)]
            resolved.append((p, f"item:{item.id}", item.revision, stage.inputs(item)))
        if problems:
            problems.sort(key=lambda p: p.line or 0)
            raise ValidationFailed(
                problems, f"{len(problems)} problem(s) in {file or 'the reviews'}; nothing was recorded"
            )
        existing = _existing_records(s, {subject for _, subject, _, _ in resolved})
        for p, subject, revision, inputs in resolved:
            r = p.review
            payload = _payload(r)
            key = (subject, r.stage, r.reviewer, revision)
            prior = existing.get(key)
            if prior is None:
                prior = ReviewRecord(
                    subject=subject,
                    stage=key[1],
                    reviewer=key[2],
                    revision=revision,
                    inputs_hash=inputs,
                    payload=payload,
                    source=source,
                )
                s.add(prior)
                existing[key] = prior
                record_event(
                    s, key[2], "review.recorded", subject, None, {"stage": key[1], "revision": revision, **payload}
                )
                report.recorded += 1
            elif prior.payload == payload and prior.inputs_hash == inputs:
                report.unchanged += 1
            else:
                before = {"stage": prior.stage, **prior.payload}
                prior.payload = payload
                prior.inputs_hash = inputs
                prior.source = source
                prior.updated_at = utcnow()
                s.add(prior)
                record_event(s, key[2], "review.replaced", subject, before, {"stage": key[1], **payload})
                report.replaced += 1
    return report


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


def _records_by_stage(s, reviews: list[PendingReview], by_id, sisters):  # type: ignore[no-untyped-def]
    """Stored records of the subjects these reviews name, by subject and stage (what separation rules read).

    Loaded in one batch the first time a rule reads them: the default rules (not the author) never do.
    """
    subjects = set()
    for p in reviews:
        item, group = getattr(p.review, "item", None), getattr(p.review, "group", None)
        if item in by_id:
            subjects.add(f"item:{item}")
        if group in sisters:
            subjects.add(f"group:{group}")
    loaded: dict[str, dict[str, dict[str, list[RecordFacts]]]] = {}

    def all_records() -> dict[str, dict[str, list[RecordFacts]]]:
        if "found" not in loaded:
            loaded["found"] = _stored_records(s, sorted(subjects))
        return loaded["found"]

    return lambda subject: _LazyRecords(lambda: all_records().get(subject, {}))


class _LazyRecords(Mapping[str, Sequence[RecordFacts]]):
    """One subject's records by stage, read from the store only when a separation rule looks."""

    def __init__(self, load: Callable[[], Mapping[str, Sequence[RecordFacts]]]) -> None:
        self._load = load

    def __getitem__(self, stage: str) -> Sequence[RecordFacts]:
        return self._load()[stage]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


def import_reviews(ws: Workspace, path: Path) -> ReviewReport:
    """Parse every line, check the parsed ones against the workspace, and report all problems at once."""
    pending, problems = parse_reviews(path)
    return record_reviews(ws, pending, str(path), parse_problems=problems)


def review_queue(ws: Workspace, stage: str, reviewer: str, limit: int | None = None) -> list[str]:
    """Items (or groups) this reviewer may review next at STAGE: pending there, allowed by the stage's
    separation rule, not yet done."""
    found = stage_named(stage)
    if found is None:
        raise ValidationFailed([Problem(f"unknown stage {stage!r}; stages are {', '.join(stage_names())}", "stage")])
    ws.require_role(reviewer, "reviewer")
    statuses = derive_status(ws)
    with ws.session() as s:
        items, perturbed = load_facts(s)
        members = live_sisters(s) if isinstance(found, GroupStage) else {}
        done = {
            (subj, rev_hash)
            for subj, rev_hash in s.execute(
                select(col(ReviewRecord.subject), col(ReviewRecord.inputs_hash)).where(
                    col(ReviewRecord.stage) == stage, col(ReviewRecord.reviewer) == reviewer
                )
            )
        }
        pending = [st for st in statuses if st.state == "in_review" and st.stage == stage]
        subjects = sorted({f"group:{st.group}" for st in pending} | {f"item:{st.id}" for st in pending})
        records = _stored_records(s, subjects)
    by_id = {i.id: i for i in items}
    out: list[str] = []
    if isinstance(found, GroupStage):
        for group in sorted({st.group for st in pending}):
            sisters = members[group]
            if found.group_separation(reviewer, group, sisters, records.get(f"group:{group}", {})):
                continue
            if (f"group:{group}", found.group_inputs(perturbed[group], sisters)) in done:
                continue
            out.append(group)
    else:
        for st in pending:
            item = by_id[st.id]
            if found.separation(reviewer, item, records.get(f"item:{item.id}", {})):
                continue
            if (f"item:{item.id}", found.inputs(item)) in done:
                continue
            out.append(item.id)
    return out[:limit] if limit else out


def _stored_records(s, subjects: list[str]) -> dict[str, dict[str, list[RecordFacts]]]:  # type: ignore[no-untyped-def]
    found: dict[str, dict[str, list[RecordFacts]]] = {}
    for start in range(0, len(subjects), 500):
        chunk = subjects[start : start + 500]
        for rec in s.scalars(select(ReviewRecord).where(col(ReviewRecord.subject).in_(chunk))):
            found.setdefault(rec.subject, {}).setdefault(rec.stage, []).append(
                RecordFacts(rec.subject, rec.stage, rec.reviewer, rec.revision, rec.inputs_hash, rec.payload, rec.id)
            )
    return found


def decide(
    ws: Workspace,
    item_id: str,
    actor: str,
    kind: str,
    reason: str,
    stage: str | None = None,
    verdict: str | None = None,
) -> None:
    """A maintainer discards, restores or overrides; the written reason is kept as an event."""
    ws.require_role(actor, "maintainer")
    if not reason.strip():
        raise ValidationFailed([Problem("a written reason is required", "reason")])
    if kind == "override" and (stage not in stage_names() or verdict not in ("pass", "fail")):
        raise ValidationFailed([Problem("an override needs --stage STAGE and --verdict pass|fail", "stage")])
    if kind != "override" and (stage is not None or verdict is not None):
        raise ValidationFailed(
            [Problem(f"--stage and --verdict belong to override, not {kind}; leave them out", "stage")]
        )
    with ws.writing() as s:
        item = s.get(Item, item_id)
        if item is None:
            raise NotFoundError(f"no item {item_id!r}")
        s.add(
            Decision(
                item_id=item_id,
                kind=kind,
                stage=stage,
                verdict=verdict,
                reason=reason,
                actor=actor,
                revision=item.revision,
            )
        )
        record_event(
            s,
            actor,
            f"item.{kind}",
            f"item:{item_id}",
            None,
            {"stage": stage, "verdict": verdict, "reason": reason, "revision": item.revision},
        )


def history(ws: Workspace, item_id: str) -> list[Event]:
    item = ws.item(item_id)
    with ws.session() as s:
        rows = s.execute(
            select(Event)
            .where(col(Event.subject).in_([f"item:{item_id}", f"group:{item.group_id}"]))
            .order_by(col(Event.id))
        ).scalars()
        return list(rows)


def require_not_author(ws: Workspace, item_id: str, person: str) -> None:
    if ws.item(item_id).author == person:
        raise PermissionDenied(f"{person!r} authored {item_id!r}: nobody reviews their own item")
