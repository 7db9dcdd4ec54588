"""The vocabulary of exclusion rules (``curation.exclusions``): a rule's name, its sentence, a verdict, and TRIAD's
default rules. Kept apart so that ``curation.schema`` and ``curation.config`` (read by light processes such as the
vLLM probe, whose interpreter lacks the derivation's dependencies) need nothing heavier than Pydantic."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, StringConstraints

FAILED: Final = "exclusion"
"""Reason prefix: ``exclusion:<rule>``, a counted checklist reviewer failed the rule (the item is returned)."""
UNATTESTED: Final = "exclusion_unattested"
"""Reason prefix: ``exclusion_unattested:<rule>``, no counted checklist reviewer attested ``pass`` (held)."""
FIELD: Final = "exclusions"
"""The checklist record's field: rule name -> ``pass`` or ``fail``."""
VERDICTS: Final = ("pass", "fail")
LISTED_BY: Final = "listed in curate.toml's [review] exclusion_rules"
"""Where a person finds the workspace's rules (named by every "unknown rule" refusal)."""

TRIAD_RULES: Final[Mapping[str, str]] = {
    "ethics": "No content involves violence, privacy violations, sensitive personal information or other ethical "
    "risks.",
    "identifying": "No clip or text names a specific real-world individual or could be used to impersonate one.",
}
"""The default rules: TRIAD §4 / App. B.1 rule 4 (``ethics``) and App. B.1 rule 2 (``identifying``)."""


def _sentence(value: str) -> str:
    if not value or value.isspace():
        raise ValueError("a rule's sentence holds at least 1 character that is not whitespace")
    return value


RuleName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
"""A rule's name: an identifier (lower-case letters, digits and ``_``, starting with a letter), at most 64 long."""
RuleSentence = Annotated[str, StringConstraints(max_length=2000), AfterValidator(_sentence)]
"""What the reviewer attests, kept as written."""
Attestation = Literal["pass", "fail"]


def default_rules() -> dict[str, str]:
    """A fresh copy of :data:`TRIAD_RULES` (a setting's default)."""
    return dict(TRIAD_RULES)
