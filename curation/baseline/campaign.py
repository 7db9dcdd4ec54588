"""Creating a baseline campaign, and the raters' answers and the graders' verdicts stored against it.

Raters are assigned per scene group (every subset sister of a group goes to the same raters, so that a group is
"all right" for a rater, TRIAD's Acc_g): a rater is never exposed to the group's labels (an author of any
sister, a group reviewer, someone shown a label — ``curation.exposure``), never a reviewer of any of its subset
items at any stage, and reads the items' language where the workspace records languages. Among those, the
least loaded raters are taken, ties in a seeded order. Raters hold the reviewer role (they answer on a
reviewer's page). Both forms are asked of every rater: the open-ended one
first, because seeing the options would tell an open answer its shape.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import Session, col

from ..errors import CurateError, NotFoundError, PermissionDenied, Problem, ValidationFailed
from ..exposure import exposures, record_exposure, reveal
from ..reference_tables import BaselineAnswer, BaselineAssignment, BaselineCampaign, BaselineGrade
from ..tables import Item, Person, ReviewRecord, SceneGroup
from ..workflow import derive_status
from ..workspace import Workspace, record_event
from .sampling import PoolItem, draw_subset, leaf_of

FORMS = ("open", "standard")
"""Open-ended (no options; graded) before Standard (options shown; exact key match)."""
MAX_OPEN_ANSWER = 2000
GRADING_VIA = "baseline grading"


@dataclass(frozen=True)
class CampaignPlan:
    """What ``create_campaign`` stored: the subset, its strata and who answers what."""

    campaign: BaselineCampaign
    assignments: dict[str, list[str]]
    """Item -> its raters."""


def _pool(ws: Workspace, pool: str, session: Session) -> list[PoolItem]:
    if pool == "admitted":
        wanted = {row.id for row in derive_status(ws) if row.state == "admitted"}
    elif pool == "all":
        wanted = None
    else:
        raise CurateError(f"unknown pool {pool!r}: give admitted or all")
    perturbed = {g.id: g.perturbed for g in session.execute(select(SceneGroup)).scalars()}
    rows = session.execute(select(Item).where(col(Item.kind) == "mcq").order_by(col(Item.id))).scalars()
    return [
        PoolItem(r.id, r.group_id, r.language, len(r.ambiguous), leaf_of(r.taxonomy, perturbed.get(r.group_id, "")))
        for r in rows
        if wanted is None or r.id in wanted
    ]


def _ineligible(session: Session, items: Sequence[str]) -> dict[str, set[str]]:
    """Per item, who may not rate it: anyone exposed to its label, anyone who reviewed it at any stage."""
    out: dict[str, set[str]] = {i: set() for i in items}
    for item, found in exposures(session, items).items():
        out[item].update(e.person for e in found)
    subjects = [f"item:{i}" for i in items]
    for start in range(0, len(subjects), 500):
        for subject, reviewer in session.execute(
            select(col(ReviewRecord.subject), col(ReviewRecord.reviewer)).where(
                col(ReviewRecord.subject).in_(subjects[start : start + 500])
            )
        ):
            out[subject.removeprefix("item:")].add(reviewer)
    return out


def create_campaign(
    ws: Workspace,
    name: str,
    *,
    size: int,
    raters_per_item: int,
    seed: int,
    raters: Sequence[str] | None = None,
    pool: str = "admitted",
    actor: str = "cli",
) -> CampaignPlan:
    """Draw the subset, assign its groups to raters and store the campaign; refused whole if a group lacks raters."""
    if size < 1 or raters_per_item < 1:
        raise CurateError("a campaign needs a size and a number of raters per item of at least 1")
    if not name or len(name) > 200 or not all(c.isalnum() or c in "._-" for c in name):
        raise CurateError(f"campaign name {name!r}: use letters, digits, '.', '_' and '-' (at most 200)")
    with ws.session() as s:
        if s.get(BaselineCampaign, name) is not None:
            raise CurateError(f"a baseline campaign named {name!r} exists already (curate baseline list shows them)")
        people = {p.name: p for p in s.execute(select(Person)).scalars()}
        pool_items = _pool(ws, pool, s)
        if not pool_items:
            raise CurateError(f"the pool ({pool}) holds no multiple-choice items; try --pool all")
        chosen, strata = draw_subset(pool_items, size, seed)
        by_id = {i.id: i for i in pool_items}
        ineligible = _ineligible(s, chosen)
    candidates = sorted(raters) if raters else sorted(n for n, p in people.items() if "reviewer" in p.role_set)
    unknown = [r for r in candidates if r not in people]
    if unknown:
        raise NotFoundError(f"no person named {', '.join(unknown)} (curate people list shows them)")
    not_reviewers = [r for r in candidates if "reviewer" not in people[r].role_set]
    if not_reviewers:
        raise PermissionDenied(
            f"{', '.join(not_reviewers)} lack the reviewer role, which the baseline page needs "
            f"(curate people add NAME --role reviewer)"
        )
    groups: dict[str, list[str]] = {}
    for item in chosen:
        groups.setdefault(by_id[item].group, []).append(item)
    rng = random.Random(seed)
    load = dict.fromkeys(candidates, 0)
    assignments: dict[str, list[str]] = {}
    problems: list[Problem] = []
    for group in sorted(groups):
        members = groups[group]
        barred = set().union(*(ineligible[i] for i in members))
        languages = {by_id[i].language for i in members}
        eligible = [
            r
            for r in candidates
            if r not in barred and (not people[r].language_set or languages <= people[r].language_set)
        ]
        if len(eligible) < raters_per_item:
            problems.append(
                Problem(
                    f"{len(eligible)} eligible rater(s) ({', '.join(eligible) or 'none'}), {raters_per_item} needed: "
                    "raters may not have authored or reviewed the group's items; add people (curate people add) "
                    "or lower --raters",
                    field=f"group {group}",
                )
            )
            continue
        order = {r: rng.random() for r in eligible}
        picked = sorted(eligible, key=lambda r: (load[r], order[r]))[:raters_per_item]
        for r in picked:
            load[r] += len(members)
        for item in members:
            assignments[item] = sorted(picked)
    if problems:
        raise ValidationFailed(problems, "no campaign was created")
    campaign = BaselineCampaign(
        name=name,
        seed=seed,
        size=size,
        raters_per_item=raters_per_item,
        forms=list(FORMS),
        items=chosen,
        pool=[i.id for i in pool_items],
        strata=[st.as_json() for st in strata],
        created_by=actor,
    )
    with ws.writing() as s:
        s.add(campaign)
        s.flush()
        for item in chosen:
            for rater in assignments[item]:
                s.add(BaselineAssignment(campaign=name, item_id=item, rater=rater))
        record_event(
            s, actor, "baseline.created", f"baseline:{name}", None, {"items": len(chosen), "seed": seed, "pool": pool}
        )
    return CampaignPlan(campaign, assignments)


def get_campaign(session: Session, name: str) -> BaselineCampaign:
    row = session.get(BaselineCampaign, name)
    if row is None:
        raise NotFoundError(f"no baseline campaign named {name!r} (curate baseline list shows them)")
    return row


def campaigns(ws: Workspace) -> list[BaselineCampaign]:
    with ws.session() as s:
        return list(s.execute(select(BaselineCampaign).order_by(col(BaselineCampaign.name))).scalars())


def assignments_of(session: Session, name: str) -> dict[str, list[str]]:
    """Item -> its raters."""
    out: dict[str, list[str]] = {}
    for item, rater in session.execute(
        select(col(BaselineAssignment.item_id), col(BaselineAssignment.rater))
        .where(col(BaselineAssignment.campaign) == name)
        .order_by(col(BaselineAssignment.item_id), col(BaselineAssignment.rater))
    ):
        out.setdefault(item, []).append(rater)
    return out


def answers_of(session: Session, name: str) -> list[BaselineAnswer]:
    return list(
        session.execute(
            select(BaselineAnswer).where(col(BaselineAnswer.campaign) == name).order_by(col(BaselineAnswer.id))
        ).scalars()
    )


def grades_of(session: Session, answer_ids: Sequence[int]) -> dict[int, list[BaselineGrade]]:
    out: dict[int, list[BaselineGrade]] = {}
    ids = list(answer_ids)
    for start in range(0, len(ids), 500):
        for row in session.execute(
            select(BaselineGrade).where(col(BaselineGrade.answer_id).in_(ids[start : start + 500]))
        ).scalars():
            out.setdefault(row.answer_id, []).append(row)
    return out


def rater_queue(ws: Workspace, name: str, rater: str) -> list[tuple[str, str]]:
    """What ``rater`` still has to answer, as (item, form), in subset order, the open form of an item first."""
    with ws.session() as s:
        campaign = get_campaign(s, name)
        mine = {i for i, rs in assignments_of(s, name).items() if rater in rs}
        done = {(a.item_id, a.form) for a in answers_of(s, name) if a.rater == rater}
    return [(item, form) for item in campaign.items if item in mine for form in FORMS if (item, form) not in done]


def record_answer(
    ws: Workspace, name: str, item_id: str, rater: str, form: str, answer: str, source: str = "app"
) -> bool:
    """Store one answer; False when the same answer was stored already. Answers are final (a different one is refused)."""
    answer = answer.strip()
    with ws.writing() as s:
        get_campaign(s, name)
        row = s.get(Item, item_id)
        if row is None:
            raise NotFoundError(f"no item named {item_id!r} in this workspace")
        assigned = s.execute(
            select(BaselineAssignment).where(
                col(BaselineAssignment.campaign) == name,
                col(BaselineAssignment.item_id) == item_id,
                col(BaselineAssignment.rater) == rater,
            )
        ).first()
        if assigned is None:
            raise PermissionDenied(f"{rater!r} is not a rater of {item_id!r} in campaign {name!r}")
        if form not in FORMS:
            raise CurateError(f"unknown form {form!r}: give open or standard")
        if form == "standard" and answer not in row.options:
            raise CurateError(f"a Standard answer is one of the option keys {', '.join(row.options)}, not {answer!r}")
        if form == "open" and not 0 < len(answer) <= MAX_OPEN_ANSWER:
            raise CurateError(f"an open-ended answer holds 1 to {MAX_OPEN_ANSWER} characters")
        mine = {
            a.form: a
            for a in s.execute(
                select(BaselineAnswer).where(
                    col(BaselineAnswer.campaign) == name,
                    col(BaselineAnswer.item_id) == item_id,
                    col(BaselineAnswer.rater) == rater,
                )
            ).scalars()
        }
        if form in mine:
            if mine[form].answer == answer:
                return False
            raise CurateError(f"{rater!r} has answered {item_id!r} ({form}) already; answers are final")
        if form == "standard" and "open" not in mine:
            raise CurateError(
                f"answer {item_id!r} open-ended first: seeing the options would tell the open answer its shape"
            )
        s.add(
            BaselineAnswer(
                campaign=name,
                item_id=item_id,
                rater=rater,
                form=form,
                answer=answer,
                content_hash=row.content_hash,
                source=source,
            )
        )
        record_event(s, rater, "baseline.answered", f"item:{item_id}", None, {"campaign": name, "form": form})
    return True


def ungraded(ws: Workspace, name: str, grader: str) -> list[BaselineAnswer]:
    """Open-ended answers ``grader`` has not graded, excluding a person's own answers."""
    with ws.session() as s:
        get_campaign(s, name)
        opens = [a for a in answers_of(s, name) if a.form == "open" and a.rater != grader]
        graded = grades_of(s, [a.id for a in opens if a.id is not None])
    return [a for a in opens if not any(g.grader == grader for g in graded.get(a.id or 0, []))]


def record_grade(ws: Workspace, answer_id: int, grader: str, correct: bool, actor: str | None = None) -> None:
    """Store a verdict on an open-ended answer; a person's grading exposes them to the item's label."""
    with ws.writing() as s:
        answer = s.get(BaselineAnswer, answer_id)
        if answer is None or answer.form != "open":
            raise NotFoundError(f"no open-ended answer {answer_id} (curate baseline grade lists them)")
        if grader == answer.rater:
            raise PermissionDenied(f"{grader!r} cannot grade their own answer")
        existing = s.execute(
            select(BaselineGrade).where(col(BaselineGrade.answer_id) == answer_id, col(BaselineGrade.grader) == grader)
        ).scalar_one_or_none()
        if existing is not None:
            if existing.correct == correct:
                return
            existing.correct = correct
            s.add(existing)
        else:
            s.add(BaselineGrade(answer_id=answer_id, grader=grader, correct=correct))
        if not grader.startswith("judge:"):
            record_exposure(s, actor or grader, [grader], [answer.item_id], f"{GRADING_VIA} {answer.campaign}")
        record_event(
            s, actor or grader, "baseline.graded", f"item:{answer.item_id}", None,
            {"campaign": answer.campaign, "answer": answer_id, "grader": grader, "correct": correct},
        )  # fmt: skip


def campaigns_of_rater(ws: Workspace, rater: str) -> list[str]:
    """The campaigns that assign ``rater`` anything, by name."""
    with ws.session() as s:
        return sorted(
            set(
                s.execute(
                    select(col(BaselineAssignment.campaign)).where(col(BaselineAssignment.rater) == rater)
                ).scalars()
            )
        )


def reveal_for_grading(ws: Workspace, grader: str, campaign: str, item_id: str) -> None:
    """Record that a grading page shows ``grader`` the item's label (before it is shown: blind means blind)."""
    reveal(ws, grader, [item_id], f"{GRADING_VIA} {campaign}")
