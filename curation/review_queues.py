"""Review queues: what a reviewer may review next at a stage, what waits there that they are not offered and
why, and the queue entries as a reservation claims them. The CLI, the UI and Label Studio share these rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlmodel import col

from .derived import DerivedState, load_derived
from .errors import NotFoundError, Problem, ValidationFailed
from .exposure import exposed_items
from .kinds import GroupStage, Stage, stage_named, stage_names
from .reservations import Wanted
from .tables import ReviewRecord
from .workspace import Workspace


def review_queue(ws: Workspace, stage: str, reviewer: str, limit: int | None = None) -> list[str]:
    """Items (or groups) this reviewer may review next at STAGE (see :func:`queue_from`)."""
    out = queue_report(ws, stage, reviewer).offered
    return out[:limit] if limit else out


def queue_report(ws: Workspace, stage: str, reviewer: str, state: DerivedState | None = None) -> QueueReport:
    """:func:`queue_report_from` on a fresh derivation, checking the stage and the person first."""
    found = stage_named(stage)
    if found is None:
        raise ValidationFailed([Problem(f"unknown stage {stage!r}; stages are {', '.join(stage_names())}", "stage")])
    ws.require_role(reviewer, "reviewer")
    return queue_report_from(ws, state or load_derived(ws), found, reviewer)


@dataclass
class QueueReport:
    """A person's queue at a stage: what is offered, in order, and what else waits there that they are not
    offered, with why (``curate review queue --why``, the page's "why not" panel)."""

    stage: str
    offered: list[str]
    withheld: dict[str, str] = field(default_factory=dict)


def queue_from(ws: Workspace, state: DerivedState, stage: Stage, reviewer: str) -> list[str]:
    """What REVIEWER may review next at STAGE, from a loaded derivation (see :func:`queue_report_from`)."""
    return queue_report_from(ws, state, stage, reviewer).offered


def queue_report_from(ws: Workspace, state: DerivedState, stage: Stage, reviewer: str) -> QueueReport:
    """What REVIEWER may review next at STAGE, from a loaded derivation: pending there (a group only once it is
    open: every live sister passed its answer check), allowed by the stage's separation rule in force, not
    exposed to the label at a blind stage, not yet done by them, in a language they read and at a stage they
    are qualified for (where the workspace sets either), and leaving every later stage of the item staffable if
    they take it (the staffing planner). The CLI, the UI and tests share it. Entries the last three rules keep
    from them are in ``withheld`` with the reason."""
    with ws.session() as s:
        done = {
            (subj, rev_hash)
            for subj, rev_hash in s.execute(
                select(col(ReviewRecord.subject), col(ReviewRecord.inputs_hash)).where(
                    col(ReviewRecord.stage) == stage.name, col(ReviewRecord.reviewer) == reviewer
                )
            )
        }
        pending = [st.id for st in state.statuses if st.state == "in_review" and st.stage == stage.name]
        known = exposed_items(s, reviewer, pending) if stage.blind and pending else set()
    report = QueueReport(stage.name, [])
    abilities = state.inputs.abilities
    if isinstance(stage, GroupStage):
        rule = stage.group_separation_rule(state.settings)
        for group in state.open_groups(stage.name):
            sisters = state.sisters(group)
            if rule(reviewer, group, sisters, state.group_separation_records(group)):
                continue
            if (f"group:{group}", stage.group_inputs(state.perturbed[group], sisters)) in done:
                continue
            why = abilities.refusal(reviewer, stage.name, [s.id for s in sisters]) if abilities.active else None
            if why:
                report.withheld[group] = why
                continue
            report.offered.append(group)
        return report
    item_rule = stage.separation_rule(state.settings)
    for item_id in pending:
        item = state.facts[item_id]
        if item_id in known or item_rule(reviewer, item, state.separation_records(item_id)):
            continue
        if (f"item:{item_id}", stage.inputs(item)) in done:
            continue
        why = abilities.refusal(reviewer, stage.name, [item_id]) if abilities.active else None
        if why is None and not state.staffing_check.keeps_staffable(item, stage.name, reviewer):
            later = ", ".join(state.staffing_check.later_stages(item, stage.name))
            why = (
                f"staffing:{stage.name}: if {reviewer} took it, nobody left could do its {later} under the "
                f'[review] separation = "{state.settings.separation}" rule; it is kept for someone else'
            )
        if why:
            report.withheld[item_id] = why
            continue
        report.offered.append(item_id)
    return report


def wanted(state: DerivedState, stage: str, ids: Sequence[str]) -> list[Wanted]:
    """The queue entries IDS (items, or groups at a group stage) as a reservation claim reads them: subject,
    quorum and the inputs hash their records name now."""
    found = stage_named(stage)
    assert found is not None
    quorum = found.quorum(state.settings)
    if isinstance(found, GroupStage):
        return [Wanted(f"group:{g}", quorum, group_content(state, stage, g)) for g in ids]
    return [Wanted(f"item:{i}", quorum, found.inputs(state.facts[i])) for i in ids]


def group_content(state: DerivedState, stage: str, group: str) -> str:
    """The content hash of GROUP's live sisters as STAGE judges it: what a group record names as ``content``."""
    found = stage_named(stage)
    if not isinstance(found, GroupStage):
        raise ValidationFailed([Problem(f"{stage!r} is not a group stage", "stage")])
    if group not in state.perturbed:
        raise NotFoundError(f"no group {group!r}")
    return found.group_inputs(state.perturbed[group], state.sisters(group))
