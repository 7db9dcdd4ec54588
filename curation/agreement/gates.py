"""Workspace-level agreement gates and the adjudication queue.

Gates never change item states; ``release build`` calls :func:`check_agreement_gates` and refuses to
build while it returns failures. Thresholds live in the ``[agreement]`` section of ``curate.toml``
(a minimum of -1 turns a gate off). An undefined statistic fails its gate: a release cannot claim an
agreement that could not be measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from curation.config import AgreementSettings
from curation.vocab import AUDIO_AXES, CHECKLIST_VIEWS, FULL_VIEW

from .review_agreement import (
    ReviewedItem,
    answer_agreement,
    audio_agreement,
    checklist_agreement,
    load_reviewed_items,
)

GATE_OFF = -1.0


@dataclass(frozen=True)
class GateFailure:
    """One agreement gate that blocks a release; ``value`` is None when the statistic is undefined."""

    gate: str
    statistic: str
    value: float | None
    minimum: float
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "statistic": self.statistic,
            "value": self.value,
            "minimum": self.minimum,
            "message": self.message,
        }


def _judge(gate: str, statistic: str, result: Mapping[str, Any], minimum: float) -> GateFailure | None:
    value = result.get("value")
    if value is None:
        return GateFailure(
            gate, statistic, None, minimum, f"{statistic} could not be measured: {result.get('undefined')}"
        )
    if value < minimum:
        return GateFailure(
            gate, statistic, value, minimum, f"{statistic} is {value:.3f}, below the minimum {minimum:.3f}"
        )
    return None


def agreement_gate_failures(
    items: list[ReviewedItem], settings: AgreementSettings, gated: Mapping[str, Any] | None = None
) -> list[GateFailure]:
    """The gates of ``settings`` judged on these items (pure: no workspace). ``gated``: their
    ``gated_statistics`` (or an ``agreement_report`` of them), when the caller has them; else only the
    statistics of the gates switched on are computed."""
    failures: list[GateFailure | None] = []
    if settings.checklist_alpha_min > GATE_OFF:
        failures.append(
            _judge(
                "checklist_alpha_min",
                "subset-checklist alpha (nominal, item x view x option)",
                (checklist_agreement(items) if gated is None else gated["subset_checklist"])["all"],
                settings.checklist_alpha_min,
            )
        )
    if settings.answer_kappa_min > GATE_OFF:
        failures.append(
            _judge(
                "answer_kappa_min",
                "blind answer vs label kappa",
                (answer_agreement(items) if gated is None else gated["answer_check"])["overall"],
                settings.answer_kappa_min,
            )
        )
    if settings.audio_alpha_min > GATE_OFF:
        audio = audio_agreement(items) if gated is None else gated["audio_signoff"]
        failures += [
            _judge("audio_alpha_min", f"audio sign-off alpha (ordinal, {axis})", audio[axis], settings.audio_alpha_min)
            for axis in AUDIO_AXES
        ]
    return [f for f in failures if f is not None]


def active_thresholds(settings: AgreementSettings) -> dict[str, float]:
    """The thresholds that are switched on, by setting name (for plots that draw them)."""
    names = ("checklist_alpha_min", "answer_kappa_min", "audio_alpha_min")
    return {n: getattr(settings, n) for n in names if getattr(settings, n) > GATE_OFF}


def check_agreement_gates(workspace) -> list[GateFailure]:  # type: ignore[no-untyped-def]
    """Hook for ``release build``: the agreement gates that fail in this workspace (empty: all pass)."""
    return agreement_gate_failures(load_reviewed_items(workspace), workspace.settings.agreement)


@dataclass(frozen=True)
class AdjudicationEntry:
    """An item whose reviewers disagree beyond a threshold at one stage."""

    item: str
    stage: str
    reviewers: tuple[str, ...]
    reasons: tuple[str, ...]
    measure: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "stage": self.stage,
            "reviewers": list(self.reviewers),
            "reasons": list(self.reasons),
            "measure": self.measure,
        }


def _checklist_entry(item: ReviewedItem, split_max: float) -> AdjudicationEntry | None:
    records = item.records.get("subset_checklist", [])
    if len(records) < 2:
        return None
    split_cells = 0
    split_views = []
    for view in CHECKLIST_VIEWS:
        marks = [set(payload["consistent"].get(view, [])) for _, payload in records]
        split = sum(1 for o in item.options if 0 < sum(o in m for m in marks) < len(marks))
        split_cells += split
        if split:
            split_views.append(view)
    share = split_cells / (len(CHECKLIST_VIEWS) * len(item.options))
    reasons = list(item.held_for)  # the verdict depends on the combination rule: held until adjudicated
    if share > split_max:
        reasons.append(f"checklist_split:{share:.2f}")
    if FULL_VIEW in split_views:
        reasons.append(f"split_view:{FULL_VIEW}")
    if not reasons:
        return None
    return AdjudicationEntry(item.id, "subset_checklist", tuple(r for r, _ in records), tuple(reasons), share)


def _audio_entry(item: ReviewedItem, spread_min: int) -> AdjudicationEntry | None:
    records = item.records.get("audio_signoff", [])
    if len(records) < 2:
        return None
    spreads = {
        axis: max(p["scores"][axis] for _, p in records) - min(p["scores"][axis] for _, p in records)
        for axis in AUDIO_AXES
    }
    wide = [f"audio_spread:{axis}" for axis, spread in spreads.items() if spread >= spread_min]
    if not wide:
        return None
    return AdjudicationEntry(
        item.id, "audio_signoff", tuple(r for r, _ in records), tuple(wide), float(max(spreads.values()))
    )


def _answer_entry(item: ReviewedItem) -> AdjudicationEntry | None:
    records = item.records.get("answer_check", [])
    differing = [(r, p["answer"]) for r, p in records if p["answer"] != item.answer]
    if not differing:
        return None
    reasons = tuple(f"blind_answer:{reviewer}={answer}" for reviewer, answer in differing)
    return AdjudicationEntry(
        item.id,
        "answer_check",
        (item.author, *(r for r, _ in records)),
        (f"label={item.answer}", *reasons),
        len(differing) / len(records),
    )


def adjudication_entries(items: Iterable[ReviewedItem], settings: AgreementSettings) -> list[AdjudicationEntry]:
    """Items whose reviewers disagree beyond the thresholds, by item then stage (pure: no workspace).

    A stage a maintainer has settled by an override on the item's current revision leaves the queue.
    """
    entries: list[AdjudicationEntry] = []
    for item in items:
        found = [
            _audio_entry(item, settings.adjudicate_audio_spread),
            _checklist_entry(item, settings.adjudicate_checklist_split),
            _answer_entry(item),
        ]
        entries += [e for e in found if e is not None and e.stage not in item.adjudicated]
    return entries


def adjudication_queue(workspace) -> list[AdjudicationEntry]:  # type: ignore[no-untyped-def]
    """The workspace's adjudication queue, by the ``[agreement]`` thresholds of its ``curate.toml``."""
    return adjudication_entries(load_reviewed_items(workspace), workspace.settings.agreement)
