"""The modality-subset checklist (TRIAD §4.3): per view, the options still consistent; Definition 1 decides.

An item answers exactly the non-empty views of its own modalities ({text, image}: ``text``, ``image``,
``text+image``); the reviewers' sets are combined by the configured rule (``[review] combine``). When the
verdict depends on that rule (``any`` and ``majority`` disagree, whichever is configured), the stage holds the
item with ``checklist:disagreement`` until a maintainer records a consensus checklist (an adjudication).

The record also attests the workspace's exclusion rules (``exclusions``; ``curation.exclusions``): a ``fail``
returns the item (``exclusion:<rule>``), a rule no counted reviewer attested ``pass`` holds it
(``exclusion_unattested:<rule>``), whether Definition 1 was judged on the reviewers' sets or a consensus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from html import escape
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ... import exclusions
from ...exclusion_rules import VERDICTS
from ...facts import ItemFacts, RecordFacts, StageOutcome, digest
from ...schema import ChecklistReview
from ...vocab import CHECKLIST_VIEWS, modality_set, strict_views_of, view_modalities, view_name
from .._parts import Control, LabelStudioSpec, Stage, UiPage

if TYPE_CHECKING:
    from ...config import ReviewSettings


def combine_checklist(
    records: list[Mapping[str, list[str]]], rule: str, views: Sequence[str] | None = None
) -> dict[str, set[str]]:
    """Per view, combine reviewers' consistent-option sets with ``any``, ``majority`` or ``all``.

    ``views`` defaults to the views the records answer (all seven for a TRIAD item).
    """
    if views is None:
        answered = {v for rec in records for v in rec}
        views = [v for v in CHECKLIST_VIEWS if v in answered] or list(CHECKLIST_VIEWS)
    return _combined_by_rule(records, (rule,), views)[rule]


def _combined_by_rule(
    records: Sequence[Mapping[str, Sequence[str]]], rules: Sequence[str], views: Sequence[str]
) -> dict[str, dict[str, set[str]]]:
    """Per rule, per view, the combined set: each view's options are counted once for every rule (how many
    reviewers ticked each; ``any`` keeps those ticked at all, ``majority`` by more than half, ``all`` by all)."""
    n = len(records)
    out: dict[str, dict[str, set[str]]] = {rule: {} for rule in rules}
    targets = [(out[rule], rule) for rule in rules]
    for view in views:
        if n:
            ticked = records[0].get(view, ())
            for rec in records:  # a loop, not all(): it runs for every view of every item
                if rec.get(view, ()) != ticked:
                    break
            else:
                for combined, _ in targets:  # the reviewers agree: every rule keeps what they ticked
                    combined[view] = set(ticked)
                continue
        counts: dict[str, int] = {}
        count = counts.get
        for rec in records:
            for option in set(rec.get(view, ())):
                counts[option] = count(option, 0) + 1
        for combined, rule in targets:
            if rule == "any":
                combined[view] = set(counts)
            elif rule == "all":
                combined[view] = {o for o, c in counts.items() if c == n}
            else:
                combined[view] = {o for o, c in counts.items() if c * 2 > n}
    return out


RULES = ("any", "majority", "all")
DISAGREEMENT = "checklist:disagreement"
COMPARED_RULES = ("any", "majority")
"""The rules whose verdicts are compared with the configured one's (design.md, Definition 1)."""


def rule_verdicts(
    records: list[Mapping[str, list[str]]],
    answer: str,
    modalities: Sequence[str],
    views: Sequence[str],
    rules: Sequence[str] = RULES,
) -> dict[str, list[str]]:
    """Per combination rule, Definition 1's reasons on the reviewers' combined sets (empty: well posed)."""
    combined = _combined_by_rule(records, rules, views)
    verdicts: dict[str, list[str]] = {}
    for rule in rules:
        same = next((done for done in verdicts if combined[done] == combined[rule]), None)
        verdicts[rule] = (
            list(verdicts[same]) if same is not None else well_posedness_reasons(combined[rule], answer, modalities)
        )
    return verdicts


def verdict_depends_on_rule(verdicts: Mapping[str, list[str]], configured: str) -> bool:
    """Whether the configured rule and ``any``/``majority`` disagree on passing (well posed or not)."""
    return len({not verdicts[rule] for rule in {configured, *COMPARED_RULES}}) > 1


def checklists_differ(records: list[Mapping[str, list[str]]], views: Sequence[str]) -> bool:
    """Whether the reviewers' checklists differ on any view."""
    return any(len({tuple(sorted(rec.get(view, ()))) for rec in records}) > 1 for view in views)


def well_posedness_reasons(
    sets: Mapping[str, set[str]], answer: str, modalities: Sequence[str] | None = None
) -> list[str]:
    """TRIAD Definition 1 on per-view consistent sets, over the item's own modalities; also used by the checker.

    ``modalities`` defaults to those of the largest view in ``sets``.
    """
    if modalities is None:
        modalities = modality_set({m for v in sets for m in view_modalities(v)})
    full_view, strict, without = _definition(tuple(modalities))
    reasons: list[str] = []
    full = sets[full_view]
    if full != {answer}:
        reasons.append("label_mismatch" if len(full) <= 1 else "underdetermined")
    reasons += [f"reducible:{view}" for view in strict if len(sets[view]) < 2]
    if full == {answer}:
        for modality, rest in without:
            if not sets[rest] > full:
                reasons.append(f"not_enlarging:{modality}")
    return reasons


@lru_cache(maxsize=64)
def _definition(modalities: tuple[str, ...]) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]:
    """For a modality set: its full view, its strict views, and per modality the view without it.

    A one-modality set has no view without its only modality to compare, so it gets no such pair.
    """
    own = modality_set(modalities)
    without = tuple((m, view_name(set(own) - {m})) for m in own if len(own) > 1)
    return view_name(set(own)), strict_views_of(own), without


class SubsetChecklist(Stage):
    name = "subset_checklist"
    record_model = ChecklistReview
    default_quorum = 3
    adjudicable = True
    page = UiPage("pages/subset_checklist.py", "Subset checklist", ":material/checklist:")
    help = "per view, the options still consistent"
    labelstudio = LabelStudioSpec(
        label_config=(
            '<View><Header value="$view_title"/><HyperText name="panel" value="$panel"/>'
            '<Text name="question" value="$question"/>'
            '<Header value="Tick every option that is still consistent with what is shown here." size="5"/>'
            '<Choices name="consistent" toName="question" value="$options" choice="multiple" required="true"/>'
            "</View>"
        ),
        controls={"consistent": Control("choices", required=True, from_options=True, multiple=True)},
        task_fields=("view_title", "panel", "question", "options"),
        per_view=True,
    )

    def inputs(self, item: ItemFacts) -> str:
        return digest(self.name, item.context, item.question, item.options, item.image, item.audio)

    def labelstudio_spec(self, settings: ReviewSettings) -> LabelStudioSpec | None:
        """The project with one required pass/fail control per exclusion rule (``exclusion_<rule>``), asked on
        every view's task about what that view shows."""
        return exclusion_spec(self.labelstudio, settings.exclusion_rules)

    def judge(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> StageOutcome:
        """Definition 1 on the combined checklists, then the exclusion rules (``curation.exclusions``)."""
        return exclusions.with_exclusions(
            self._judge_checklist(item, records, settings), records, settings.exclusion_rules
        )

    def settle(
        self, item: ItemFacts, consensus: Mapping[str, Any], records: Sequence[RecordFacts], settings: ReviewSettings
    ) -> StageOutcome:
        """The consensus decides the checklist; the reviewers' exclusion attestations still count."""
        outcome = self.judge_consensus(item, consensus, settings)
        return exclusions.with_exclusions(outcome, records, settings.exclusion_rules)

    def _judge_checklist(
        self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings
    ) -> StageOutcome:
        if len(records) < self.quorum(settings):
            return StageOutcome(None)
        verdicts = rule_verdicts(
            [r.payload["consistent"] for r in records],
            item.answer,
            item.modalities,
            self.views(item),
            tuple({settings.combine, *COMPARED_RULES}),
        )
        if verdict_depends_on_rule(verdicts, settings.combine):
            return StageOutcome(True, [DISAGREEMENT], held=True)
        reasons = verdicts[settings.combine]
        return StageOutcome(not reasons, reasons)

    def judge_consensus(self, item: ItemFacts, consensus: Mapping[str, Any], settings: ReviewSettings) -> StageOutcome:
        """Definition 1 over the maintainer's consensus checklist: it decides alone."""
        sets = {view: set(consensus["consistent"].get(view, ())) for view in self.views(item)}
        reasons = well_posedness_reasons(sets, item.answer, item.modalities)
        return StageOutcome(not reasons, reasons)

    def record_problems(self, review: BaseModel, item: ItemFacts) -> list[tuple[str, str]]:
        assert isinstance(review, ChecklistReview)
        keys = set(item.options)
        wanted = self.views(item)
        problems = []
        if set(review.consistent) != set(wanted):
            problems.append(
                (
                    "consistent",
                    f"{item.id!r} has the modalities {', '.join(item.modalities)}: its checklist answers exactly "
                    f"the views {', '.join(wanted)}",
                )
            )
        problems += [
            (
                f"consistent.{view}",
                f"option(s) {', '.join(sorted(set(opts) - keys))} are not options of {item.id!r} "
                f"({', '.join(sorted(keys))})",
            )
            for view, opts in review.consistent.items()
            if set(opts) - keys
        ]
        return problems

    def settings_problems(self, review: BaseModel, settings: ReviewSettings) -> list[tuple[str, str]]:
        """Exclusion rules the workspace does not list (``[review] exclusion_rules``)."""
        assert isinstance(review, ChecklistReview)
        return exclusions.unknown_rules(review.exclusions, settings.exclusion_rules)

    def admission(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> dict[str, Any]:
        rule = settings.combine
        payloads = [r.payload["consistent"] for r in records]
        combined = combine_checklist(payloads, rule, self.views(item)) if records else {}
        summary: dict[str, Any] = {
            "reviews": len(records),
            "combine": rule,
            "consistent": {view: sorted(keys) for view, keys in combined.items()},
            "unanimous_views": sum(
                1 for view in combined if len({tuple(sorted(p.get(view, []))) for p in payloads}) == 1
            ),
        }
        if settings.exclusion_rules:  # per rule, the counted reviewers' pass and fail attestations
            summary["exclusions"] = exclusions.admission_summary(records, settings.exclusion_rules)
        return summary

    def record_from_annotation(
        self, item: ItemFacts | None, values: Mapping[str | None, Mapping[str, Any]]
    ) -> dict[str, Any] | None:
        assert item is not None
        views = {view: v["consistent"] for view, v in values.items()}
        if set(views) != set(self.views(item)):
            return None
        record: dict[str, Any] = {"consistent": views}
        attested = annotation_exclusions(values)
        if attested:
            record["exclusions"] = attested
        return record


EXCLUSION_CONTROL = "exclusion_"
"""Prefix of a rule's Label Studio control: ``exclusion_<rule>``."""


def exclusion_spec(spec: LabelStudioSpec | None, rules: Mapping[str, str]) -> LabelStudioSpec | None:
    """SPEC with a required single pass/fail Choices control per rule, headed by the rule's sentence."""
    if spec is None or not rules:
        return spec
    asked = "".join(
        f'<Header value="{escape(f"Exclusion rule {rule}: {sentence}", quote=True)}" size="6"/>'
        f'<Choices name="{EXCLUSION_CONTROL}{rule}" toName="question" choice="single-radio" required="true" '
        'showInline="true"><Choice value="pass"/><Choice value="fail"/></Choices>'
        for rule, sentence in rules.items()
    )
    intro = (
        '<Header value="Exclusion rules: for each, pass when nothing this view shows breaks it, fail when '
        'something does." size="5"/>'
    )
    config = spec.label_config.removesuffix("</View>") + intro + asked + "</View>"
    controls = dict(spec.controls) | {
        f"{EXCLUSION_CONTROL}{rule}": Control("choices", required=True, choices=VERDICTS) for rule in rules
    }
    return replace(spec, label_config=config, controls=controls)


def annotation_exclusions(values: Mapping[str | None, Mapping[str, Any]]) -> dict[str, str]:
    """A reviewer's attestations from their views' annotations: a rule fails when any view failed it, passes
    when every view that asked it passed it."""
    given: dict[str, set[str]] = {}
    for view_values in values.values():
        for name, chosen in view_values.items():
            if name.startswith(EXCLUSION_CONTROL) and chosen:
                given.setdefault(name.removeprefix(EXCLUSION_CONTROL), set()).update(chosen)
    return {rule: "fail" if "fail" in chosen else "pass" for rule, chosen in given.items()}
