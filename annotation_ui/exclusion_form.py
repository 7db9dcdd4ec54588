"""The subset-checklist page's questions on the workspace's exclusion rules (``[review] exclusion_rules``).

Each rule is asked as its sentence with a pass/fail choice and no default: the page's Submit opens only once
every rule is answered, and the answers go into the record's ``exclusions`` field (``curation.exclusions``).
The answers are kept in the page's draft with the ticks and the note. Pure functions here; the page draws them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from curation.exclusion_rules import VERDICTS

CHOICE_LABELS = {
    "pass": "Pass: nothing in this item breaks the rule",
    "fail": "Fail: something in this item breaks it (the item goes back to its author)",
}
HEADING = "Exclusion rules"
HELP = (
    "Having seen every view, attest each of the workspace's exclusion rules for this item as a whole: pass when "
    "nothing in its text, image or audio breaks the rule, fail when something does."
)


def restored(kept: Any, rules: Mapping[str, str]) -> dict[str, str]:
    """The answers of a draft that still fit: rules the workspace lists, answered pass or fail."""
    if not isinstance(kept, Mapping):
        return {}
    return {rule: kept[rule] for rule in rules if kept.get(rule) in VERDICTS}


def unanswered(answers: Mapping[str, str], rules: Mapping[str, str]) -> list[str]:
    """The rules still without an answer, in the workspace's order."""
    return [rule for rule in rules if answers.get(rule) not in VERDICTS]


def record_field(answers: Mapping[str, str], rules: Mapping[str, str]) -> dict[str, Any]:
    """What the record gets: ``{"exclusions": {rule: verdict}}``, or nothing when the workspace has no rules."""
    return {"exclusions": {rule: answers[rule] for rule in rules}} if rules else {}


def widget_key(item_id: str, rule: str) -> str:
    return f"cl-{item_id}-exclusion-{rule}"
