"""Recording reviews and maintainers' decisions; review queues; item history."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from .errors import NotFoundError, PermissionDenied, Problem, ValidationFailed
from .jsonl import read_jsonl, validate_line
from .schema import REVIEW_MODELS, AnswerReview, ChecklistReview, GroupReview, ReviewIn
from .tables import Decision, Event, Item, Person, ReviewRecord, utcnow
from .vocab import STAGES
from .workflow import ItemFacts, derive_status, group_inputs, live_sisters, load_facts
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
        model = REVIEW_MODELS.get(stage) if isinstance(stage, str) else None
        if model is None:
            problems.append(Problem(f"unknown stage {stage!r}; stages are {', '.join(STAGES)}", "stage", number, file))
            continue
        parsed = validate_line(model, obj, file, number)
        if isinstance(parsed, list):
            problems.extend(parsed)
        else:
            pending.append(PendingReview(number, parsed))  # type: ignore[arg-type]
    return pending, problems


def record_reviews(ws: Workspace, reviews: list[PendingReview], file: str = "", source: str = "import") -> ReviewReport:
    """Validate against the workspace and store all records in one transaction, or none."""
    report = ReviewReport()
    with ws.writing() as s:
        items, perturbed = load_facts(s)
        by_id = {i.id: i for i in items}
        sisters = live_sisters(s)
        people = {p.name: p for p in s.execute(select(Person)).scalars()}
        problems: list[Problem] = []
        resolved: list[tuple[PendingReview, str, int, str]] = []
        for p in reviews:
            r = p.review
            reviewer = people.get(r.reviewer)
            where = dict(line=p.line, file=file)
            if reviewer is None:
                problems.append(Problem(f"unknown person {r.reviewer!r}", "reviewer", **where))
                continue
            if "reviewer" not in reviewer.role_set:
                problems.append(Problem(f"{reviewer.name!r} does not have the reviewer role", "reviewer", **where))
                continue
            if isinstance(r, GroupReview):
                group = r.group
                members = sisters.get(group)
                if not members:
                    problems.append(Problem(f"unknown group {group!r}", "group", **where))
                    continue
                if reviewer.name in {m.author for m in members}:
                    problems.append(
                        Problem(
                            f"{reviewer.name!r} authored an item of group {group!r} and cannot review it",
                            "reviewer",
                            **where,
                        )
                    )
                    continue
                resolved.append((p, f"group:{group}", 0, group_inputs(perturbed[group], members)))
                continue
            item = by_id.get(r.item)
            if item is None:
                problems.append(Problem(f"unknown item {r.item!r}", "item", **where))
                continue
            if item.author == reviewer.name:
                problems.append(
                    Problem(
                        f"{reviewer.name!r} authored {item.id!r}: nobody reviews their own item", "reviewer", **where
                    )
                )
                continue
            problems += _option_problems(r, item, where)
            resolved.append((p, f"item:{item.id}", item.revision, item.stage_inputs(r.stage)))
        if problems:
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


def _existing_records(s, subjects: set[str]) -> dict[tuple[str, str, str, int], ReviewRecord]:  # type: ignore[no-untyped-def]
    """Stored records of these subjects, keyed as the uniqueness constraint is (one query per 500)."""
    out: dict[tuple[str, str, str, int], ReviewRecord] = {}
    ordered = sorted(subjects)
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        for rec in s.scalars(select(ReviewRecord).where(ReviewRecord.subject.in_(chunk))):
            out[(rec.subject, rec.stage, rec.reviewer, rec.revision)] = rec
    return out


def _option_problems(review: ReviewIn, item: ItemFacts, where: dict[str, Any]) -> list[Problem]:
    keys = set(item.options)
    if isinstance(review, ChecklistReview):
        return [
            Problem(
                f"option(s) {', '.join(sorted(set(opts) - keys))} are not options of {item.id!r} "
                f"({', '.join(sorted(keys))})",
                f"consistent.{view}",
                **where,
            )
            for view, opts in review.consistent.items()
            if set(opts) - keys
        ]
    if isinstance(review, AnswerReview) and review.answer not in keys:
        return [Problem(f"{review.answer!r} is not an option of {item.id!r}", "answer", **where)]
    return []


def import_reviews(ws: Workspace, path: Path) -> ReviewReport:
    pending, problems = parse_reviews(path)
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {path}; nothing was recorded")
    return record_reviews(ws, pending, str(path))


def review_queue(ws: Workspace, stage: str, reviewer: str, limit: int | None = None) -> list[str]:
    """Items (or groups) this reviewer may review next at STAGE: pending there, not their own, not yet done."""
    if stage not in STAGES:
        raise ValidationFailed([Problem(f"unknown stage {stage!r}; stages are {', '.join(STAGES)}", "stage")])
    ws.require_role(reviewer, "reviewer")
    statuses = derive_status(ws)
    with ws.session() as s:
        items, perturbed = load_facts(s)
        members = live_sisters(s) if stage == "group_integration" else {}
        done = {
            (subj, rev_hash)
            for subj, rev_hash in s.execute(
                select(ReviewRecord.subject, ReviewRecord.inputs_hash).where(
                    ReviewRecord.stage == stage, ReviewRecord.reviewer == reviewer
                )
            )
        }
    by_id = {i.id: i for i in items}
    out: list[str] = []
    if stage == "group_integration":
        ready = sorted({st.group for st in statuses if st.state == "in_review" and st.stage == stage})
        for group in ready:
            sisters = members[group]
            if reviewer in {m.author for m in sisters}:
                continue
            if (f"group:{group}", group_inputs(perturbed[group], sisters)) in done:
                continue
            out.append(group)
    else:
        for st in statuses:
            if st.state != "in_review" or st.stage != stage:
                continue
            item = by_id[st.id]
            if item.author == reviewer or (f"item:{item.id}", item.stage_inputs(stage)) in done:
                continue
            out.append(item.id)
    return out[:limit] if limit else out


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
    if kind == "override" and (stage not in STAGES or verdict not in ("pass", "fail")):
        raise ValidationFailed([Problem("an override needs --stage STAGE and --verdict pass|fail", "stage")])
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
            select(Event).where(Event.subject.in_([f"item:{item_id}", f"group:{item.group_id}"])).order_by(Event.id)
        ).scalars()
        return list(rows)


def require_not_author(ws: Workspace, item_id: str, person: str) -> None:
    if ws.item(item_id).author == person:
        raise PermissionDenied(f"{person!r} authored {item_id!r}: nobody reviews their own item")
