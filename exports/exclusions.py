"""The exclusion rules in a release (design.md, "Releases — what a release may claim"): TRIAD's exclusion rules
are attestations a subset-checklist reviewer records per item (``curation.exclusions``), and the release shows
that each released item was attested on each rule.

``admission/exclusions.jsonl`` holds one line per released item and rule of the workspace's ``[review]
exclusion_rules``: whether the rule is attested (a counted checklist reviewer attested ``pass`` and none
``fail``) and the attestations behind it (record id, reviewer pseudonymous, verdict). ``admission/settings.json``
carries the rules' sentences as the workspace recorded them (``review.exclusion_rules``). ``curate release
reproduce`` re-derives the lines from the released records; the card states, from the lines, how many released
items were attested on each rule. A workspace without rules writes no file and the card says nothing about them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from curation.exclusion_rules import VERDICTS
from curation.exclusions import verdicts
from curation.workflow import Derivation

FILE = "admission/exclusions.jsonl"
KEY = "exclusions"
"""The file's key among the admission files (``exports.admission_record.FILES``)."""
DESCRIPTION = (
    "per released item and exclusion rule (the rules' sentences are review.exclusion_rules in settings.json): "
    "whether it is attested (a counted subset-checklist reviewer attested pass, none fail) and the attestations "
    "(record, reviewer pseudonymous, verdict)"
)
FIELDS = [("item", "sc:Text"), ("rule", "sc:Text"), ("attested", "sc:Boolean")]
"""The Croissant RecordSet's columns."""
STAGE = "subset_checklist"


def exclusion_rows(d: Derivation, released: Iterable[str], name: Callable[[str], str] = str) -> list[dict[str, Any]]:
    """Per released item (whose kind has the checklist) and rule, the counted records' attestations; ``name``
    turns a reviewer into the release's pseudonym (the identity where the records already carry them)."""
    rules = d.settings.exclusion_rules
    if not rules:
        return []
    facts = {i.id: i for i in d.items}
    rows: list[dict[str, Any]] = []
    for item_id in sorted(released):
        item = facts[item_id]
        kind = d.kind(item)
        if STAGE not in kind.stage_names or not kind.stage(STAGE).applies(item):
            continue
        counted = d.valid_records(item, STAGE)
        for rule in rules:
            given = verdicts(counted, rule)
            attestations = sorted(
                ({"record": r.id, "reviewer": name(r.reviewer), "verdict": v} for v in VERDICTS for r in given[v]),
                key=lambda a: a["record"],
            )
            attested = bool(given["pass"]) and not given["fail"]
            rows.append({"item": item_id, "rule": rule, "attested": attested, "attestations": attestations})
    return rows


def summary(rules: Mapping[str, str], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the card says: the rules as recorded, the released items they were judged on, and per rule how many
    of those were attested."""
    items = sorted({r["item"] for r in rows})
    return {
        "rules": dict(rules),
        "items": len(items),
        "attested": {rule: sum(1 for r in rows if r["rule"] == rule and r["attested"]) for rule in rules},
        "file": FILE,
    }


def card_lines(admission: Mapping[str, Any] | None) -> list[str]:
    """The card's paragraph on the exclusion rules, from the admission record's summary (none without rules)."""
    found = (admission or {}).get(KEY)
    if not found or not found.get("rules"):
        return []
    n = found["items"]
    counts = [f"{rule} on {found['attested'].get(rule, 0)} of {n} released item(s)" for rule in found["rules"]]
    return [
        "Exclusion rules attested per item by the subset-checklist reviewers: "
        + ", ".join(counts)
        + f" (`{found['file']}`: each item's attestations, reviewers pseudonymous). The rules as the workspace "
        "recorded them:",
        "",
        *[f"- `{rule}`: {sentence}" for rule, sentence in found["rules"].items()],
        "",
    ]


def differences(stated: Sequence[tuple[int, Mapping[str, Any]]], derived: Sequence[Mapping[str, Any]]) -> list[str]:
    """``release reproduce``'s findings: each stated line that the re-derivation does not give, by FILE:LINE, and
    each re-derived line the file lacks."""
    mine = {(r["item"], r["rule"]): r for r in derived}
    seen: set[tuple[Any, Any]] = set()
    out = []
    for n, line in stated:
        key = (line.get("item"), line.get("rule"))  # the line model checked both are strings
        seen.add(key)
        expected = mine.get(key)
        if expected is None:
            out.append(f"{FILE}:{n}: {key[0]}: rule {key[1]!r} is no rule of a released item in settings.json")
        elif dict(line) != expected:
            out.append(
                f"{FILE}:{n}: {key[0]}: rule {key[1]}: stated attested={line.get('attested')} "
                f"{list(line.get('attestations') or [])}, re-derived attested={expected['attested']} "
                f"{expected['attestations']}"
            )
    for key in sorted(set(mine) - seen):
        out.append(f"{FILE}: {key[0]}: rule {key[1]}: no line (re-derived attested={mine[key]['attested']})")
    return out


def reproduce_differences(
    folder: Path,
    d: Derivation,
    released: Iterable[str],
    read: Callable[[Path, str], Sequence[tuple[int, dict[str, Any]]]],
) -> list[str]:
    """The file's lines against the re-derivation from the released records (``read``: the admission reader,
    which checks each line first). A release with no rules (built before them, or with ``{}``) needs no file."""
    derived = exclusion_rows(d, released)
    if not (folder / FILE).exists() and not (folder / FILE).is_symlink():
        return [f"{FILE}: missing, but the release's rules re-derive {len(derived)} line(s)"] if derived else []
    return differences(read(folder, FILE), derived)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class AttestationEntry(_Strict):
    record: int
    reviewer: str
    verdict: Literal["pass", "fail"]


class ExclusionLine(_Strict):
    """One line of ``admission/exclusions.jsonl``."""

    item: str = Field(min_length=1)
    rule: str = Field(min_length=1)
    attested: bool
    attestations: list[AttestationEntry]
