"""Who can do what: the languages people read and the stages they are qualified for (design.md, "Work
distribution"). Queues offer an item only to reviewers who read its language and, at a stage someone is
qualified for, only to those qualified; the staffing planner plans with the same rule.

A person with no languages set reads every language; a stage nobody is qualified for is open to every reviewer.
A workspace without these settings behaves as one without this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .errors import Problem, ValidationFailed
from .kinds import stage_names

LANGUAGE_TAG = r"^[a-z]{2,3}(-[A-Za-z0-9]+)*$"


def primary(tag: str) -> str:
    """The primary subtag of a language tag, lower case: ``zh`` for ``zh-Hans``; who reads ``zh`` reads both."""
    return tag.split("-", 1)[0].lower()


@dataclass(frozen=True)
class Abilities:
    """People's languages and qualifications, and the languages of the items they may be offered."""

    reads: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Person -> the primary language subtags they read (only people who set any)."""
    can: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Person -> the stages they are qualified for (only people who hold any)."""
    item_language: Mapping[str, str] = field(default_factory=dict)
    """Item -> its language tag (loaded only when someone set languages)."""

    @property
    def active(self) -> bool:
        return bool(self.reads or self.can)

    @property
    def qualified_stages(self) -> frozenset[str]:
        return frozenset(stage for stages in self.can.values() for stage in stages)

    def refusal(self, person: str, stage: str, items: Iterable[str]) -> str | None:
        """Why PERSON may not take STAGE of ITEMS (one item, or a group's sisters); None when they may."""
        if stage in self.qualified_stages and stage not in self.can.get(person, frozenset()):
            holders = sorted(p for p, stages in self.can.items() if stage in stages)
            return f"qualification:{stage}: only people qualified for {stage} take it ({', '.join(holders)})"
        reads = self.reads.get(person)
        if reads:
            for item in items:
                language = self.item_language.get(item)
                if language is not None and primary(language) not in reads:
                    return f"language_not_read:{language}: {item} is in {language}, which {person} does not read"
        return None

    def allows(self, person: str, stage: str, items: Iterable[str]) -> bool:
        return self.refusal(person, stage, items) is None

    def key(self) -> tuple[object, ...]:
        """A stable value of everything here, for caches keyed by what a derivation reads."""
        return (
            sorted((p, sorted(v)) for p, v in self.reads.items()),
            sorted((p, sorted(v)) for p, v in self.can.items()),
            sorted(self.item_language.items()) if self.reads else [],
        )


NO_ABILITIES = Abilities()


def parse_languages(values: Iterable[str]) -> list[str]:
    """Language tags from ``--languages zh,en`` (repeatable, comma-separated), checked and sorted; ``[]`` for
    an empty value (reads any language)."""
    import re

    tags = sorted({v.strip() for value in values for v in value.split(",") if v.strip()})
    bad = [t for t in tags if not re.fullmatch(LANGUAGE_TAG, t)]
    if bad:
        raise ValidationFailed(
            [Problem(f"{t!r} is not a language tag (like en, zh or zh-Hans)", field="languages") for t in bad]
        )
    return tags


def parse_stages(values: Iterable[str]) -> list[str]:
    """Stage names from ``--can grammar --can answer_check`` (or comma-separated), checked and sorted."""
    names = sorted({v.strip() for value in values for v in value.split(",") if v.strip()})
    known = stage_names()
    bad = [n for n in names if n not in known]
    if bad:
        raise ValidationFailed(
            [Problem(f"unknown stage {n!r}; stages are {', '.join(known)}", field="can") for n in bad]
        )
    return names


def abilities_of(session, people: Iterable[tuple[str, str, str, str]]) -> Abilities:  # type: ignore[no-untyped-def]
    """The abilities of PEOPLE (name, roles, languages, can rows), and the items' languages when anyone set
    languages (one query)."""
    from sqlalchemy import select
    from sqlmodel import col

    from .tables import Item

    reads: dict[str, frozenset[str]] = {}
    can: dict[str, frozenset[str]] = {}
    for name, roles, languages, stages in people:
        if "reviewer" not in roles.split(","):
            continue
        if languages:
            reads[name] = frozenset(primary(t) for t in languages.split(",") if t)
        if stages:
            can[name] = frozenset(s for s in stages.split(",") if s)
    if not reads:
        return Abilities({}, can, {})
    language = dict(session.execute(select(col(Item.id), col(Item.language))).all())
    return Abilities(reads, can, language)
