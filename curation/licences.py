"""The open licences a workspace takes in: one list, checked at every door where a licence comes with the data.

A benchmark is built to be released, so whatever it takes in must be redistributable: each licence given with
incoming data (an item's ``provenance.image.license`` / ``provenance.audio.license``, a judge task's or candidate
query's ``license``, a story candidate's ``source.license``, a book's rights) must be one of the workspace's open
licences, else the whole file is refused (``FILE:LINE: field: "X" is not an open licence ...``) and nothing is
stored. Refused, not held: a held item would already have its media copied into the store and its text in the
database, which is what a closed licence forbids. The one exception is a judge *candidate query* (Judge
Anything §2.1 selects open-source queries from whole benchmarks): it is imported held by name
(``licence:closed:<id>`` or ``licence:unknown:<text>``, :mod:`curation.kinds.judge.query_draw`), never drawn,
promoted or released, so the curator sees which queries a benchmark's licence rules out.

The list is :data:`DEFAULT_OPEN_LICENCES` (SPDX identifiers) unless ``[licences] accept`` in ``curate.toml``
replaces it; ``[licences] add`` extends it (for a research-only benchmark, say, ``add = ["CC-BY-NC-4.0"]``).
Identifiers compare without regard to case, and a licence written the way rights lines write it (``CC BY 4.0``,
a creativecommons.org URL, "Creative Commons Attribution-ShareAlike 4.0", "public domain") counts as its SPDX
identifier.
"""

from __future__ import annotations

import re
from collections.abc import Collection

DEFAULT_OPEN_LICENCES: tuple[str, ...] = (
    "CC0-1.0",
    "PD",
    "CC-PDDC",
    "PDDL-1.0",
    "CC-BY-4.0",
    "CC-BY-3.0",
    "CC-BY-2.5",
    "CC-BY-2.0",
    "CC-BY-SA-4.0",
    "CC-BY-SA-3.0",
    "CC-BY-SA-2.5",
    "CC-BY-SA-2.0",
    "ODC-By-1.0",
    "ODbL-1.0",
    "CDLA-Permissive-2.0",
    "CDLA-Permissive-1.0",
    "CDLA-Sharing-1.0",
    "MIT",
    "Apache-2.0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "Unlicense",
)
"""Open licences in the Open Definition's sense (anyone may use, change and share, for any purpose): public domain
dedications, Creative Commons Attribution and Attribution-ShareAlike, the Open Data Commons and CDLA data licences,
and permissive software licences that datasets are also published under. Not in it: NonCommercial (``-NC``) and
NoDerivatives (``-ND``) licences and "all rights reserved"; a workspace that may hold them adds them itself."""

_CC = re.compile(r"\bCC[\s_-]*(BY(?:[\s_-]*(?:NC|SA|ND))*)[\s_-]*(\d\.\d)\b", re.IGNORECASE)
_CC_URL = re.compile(r"creativecommons\.org/licenses/([a-z-]+)/(\d\.\d)", re.IGNORECASE)
_CC_WORDS = re.compile(
    r"Creative Commons Attribution((?:[\s-]+(?:NonCommercial|Non-Commercial|ShareAlike|NoDerivatives|NoDerivs))*)"
    r"[\s-]+(\d\.\d)",
    re.IGNORECASE,
)
_WORDS_TO_CODE = {
    "noncommercial": "NC",
    "non-commercial": "NC",
    "sharealike": "SA",
    "noderivatives": "ND",
    "noderivs": "ND",
}


def normalize_license(text: str) -> str:
    """An SPDX identifier (``CC-BY-SA-4.0``) from a rights line, a licence URL or the licence's name;
    ``""`` when none is recognized."""
    if match := _CC.search(text):
        parts = re.split(r"[\s_-]+", match.group(1).upper())
        return "CC-" + "-".join(p for p in parts if p) + f"-{match.group(2)}"
    if match := _CC_URL.search(text):
        return f"CC-{match.group(1).upper()}-{match.group(2)}"
    if match := _CC_WORDS.search(text):
        words = re.findall(r"NonCommercial|Non-Commercial|ShareAlike|NoDerivatives|NoDerivs", match.group(1), re.I)
        extra = [_WORDS_TO_CODE[w.lower()] for w in words]
        return "-".join(["CC-BY", *extra, match.group(2)])
    if re.search(r"\bCC0\b|public domain", text, re.IGNORECASE):
        return "CC0-1.0"
    return ""


def is_open(value: str, accepted: Collection[str]) -> bool:
    """Whether ``value`` names one of ``accepted`` (as an identifier, case aside, or as a rights line names it)."""
    folded = {a.casefold() for a in accepted}
    if value.strip().casefold() in folded:
        return True
    normalized = normalize_license(value)
    return bool(normalized) and normalized.casefold() in folded


def licence_problem(value: str, accepted: Collection[str]) -> str | None:
    """Why ``value`` is refused (in the user's words, with what to do), or None for an open licence."""
    if is_open(value, accepted):
        return None
    shown = value if len(value) <= 80 else value[:77] + "..."
    return (
        f'"{shown}" is not an open licence; the workspace accepts: {", ".join(accepted)}; to accept another, '
        "add its SPDX identifier to [licences] add in curate.toml"
    )
