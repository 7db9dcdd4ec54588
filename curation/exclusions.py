"""TRIAD's exclusion rules as attestations: each rule is a sentence a subset-checklist reviewer attests per item.

TRIAD §4 names four exclusion rules that apply throughout construction. Three of them are stages or reason
codes of their own here: an item answerable from a smaller modality subset (``reducible:<view>``, the subset
checklist), ungrammatical English (the ``grammar`` stage) and unscreened AI-generated images (the
``image_screening`` stage); App. B.1's "no TTS-only audio" is ``tts_only_audio``. What no stage checks is
content: "no content may involve violence, privacy violations, or other ethical risks" (§4, App. B.1 rule 4)
and "no clip names a specific real-world individual or could be used to impersonate one" (App. B.1 rule 2).
Those are the default rules of ``[review] exclusion_rules`` (:data:`TRIAD_RULES`); a workspace names its own.

A checklist record attests each rule ``pass`` or ``fail`` (its optional ``exclusions`` field). The derivation
(:func:`with_exclusions`) returns the item to its author with ``exclusion:<rule>`` when any counted checklist
reviewer fails a rule, and holds it with ``exclusion_unattested:<rule>`` while no counted reviewer has attested
``pass`` on a rule; a changed record from the same reviewer (the attestations added) replaces the earlier one and
lifts the hold. Attestations are part of the record, not of the item: they never change a stage's inputs hash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .exclusion_rules import FAILED, FIELD, LISTED_BY, UNATTESTED
from .facts import RecordFacts, StageOutcome


def unknown_rules(attested: Mapping[str, Any] | None, rules: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(field, problem)`` for every rule a record attests that the workspace does not list."""
    listed = ", ".join(rules) or "none"
    return [
        (f"{FIELD}.{name}", f"unknown exclusion rule {name!r}; this workspace's rules are {listed} ({LISTED_BY})")
        for name in (attested or {})
        if name not in rules
    ]


def verdicts(records: Sequence[RecordFacts], rule: str) -> dict[str, list[RecordFacts]]:
    """The counted records' attestations on RULE: ``pass`` and ``fail`` -> the records that gave them."""
    out: dict[str, list[RecordFacts]] = {"pass": [], "fail": []}
    for r in records:
        given = (r.payload.get(FIELD) or {}).get(rule)
        if given in out:
            out[given].append(r)
    return out


def exclusion_reasons(records: Sequence[RecordFacts], rules: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The rules the counted records fail (``exclusion:<rule>``) and those no record attested ``pass`` on
    (``exclusion_unattested:<rule>``), in the workspace's order of rules."""
    failed: list[str] = []
    unattested: list[str] = []
    if not rules:
        return failed, unattested
    for rule in rules:
        given = verdicts(records, rule)
        if given["fail"]:
            failed.append(f"{FAILED}:{rule}")
        elif not given["pass"]:
            unattested.append(f"{UNATTESTED}:{rule}")
    return failed, unattested


def with_exclusions(outcome: StageOutcome, records: Sequence[RecordFacts], rules: Mapping[str, str]) -> StageOutcome:
    """The checklist stage's outcome with the exclusion rules judged on its counted records.

    - a failed rule returns the item at once (even short of the quorum), as a failed grammar review does;
    - with the quorum, a rule nobody attested ``pass`` on holds the item (``held``: its later stages go on, and it
      is ``held`` once through) until a reviewer's changed record attests it; the checklist's own hold
      (``checklist:disagreement``) is kept beside it;
    - an item returned by Definition 1 lists its exclusion reasons too (every violated rule is reported).
    """
    failed, unattested = exclusion_reasons(records, rules)
    if outcome.passed is None:
        return StageOutcome(False, failed) if failed else outcome
    if outcome.passed is False and not outcome.held:
        return StageOutcome(False, [*outcome.reasons, *failed, *unattested]) if failed or unattested else outcome
    if failed:
        return StageOutcome(False, [*failed, *unattested])
    if unattested:
        return StageOutcome(True, [*outcome.reasons, *unattested], held=True)
    return outcome


def admission_summary(records: Sequence[RecordFacts], rules: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """Per rule, how many counted reviewers attested ``pass`` and ``fail`` (the stage's admission summary)."""
    return {rule: {verdict: len(given) for verdict, given in verdicts(records, rule).items()} for rule in rules}
