"""The registry of kinds: every part of omnicurate that loops over stages or gates asks here.

The built-in kinds load on first use: asking for one kind (``kind_of``) imports only its package, so that
``curate status`` in a workspace of mcq items never imports the judge or story kinds; asking for every kind
(``kinds``, ``all_stages``) imports them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from typing import Any

from sqlalchemy import literal, select, table
from sqlmodel import col

from ..facts import ItemFacts
from ..tables import Item
from ._parts import Kind, Stage

_KINDS: dict[str, Kind] = {}
BUILTIN_KINDS = {"mcq": "mcq", "judge_task": "judge", "story_transition": "story"}
"""The built-in kinds, by name: the package under ``curation.kinds`` that registers each."""
UNITS_APART = {"judge_task": "judge_task"}
"""The built-in kinds whose units live in a table of their own rather than ``item``, by that table: whether a
workspace holds any is asked of the table before the kind is loaded."""


def register_kind(kind: Kind) -> Kind:
    """Make a kind known; its stage names must not clash with another kind's (records name only a stage)."""
    if kind.name not in BUILTIN_KINDS:
        _load_builtin()  # a new kind's stage names are checked against every built-in kind's
    if kind.name in _KINDS and _KINDS[kind.name] is not kind:
        raise ValueError(f"a kind named {kind.name!r} is already registered")
    taken = {s.name: k.name for k in _KINDS.values() if k is not kind for s in k.stages}
    clash = sorted(set(kind.stage_names) & set(taken))
    if clash:
        raise ValueError(f"stage(s) {', '.join(clash)} of kind {kind.name!r} already belong to another kind")
    _KINDS[kind.name] = kind
    return kind


def unregister_kind(name: str) -> None:
    _KINDS.pop(name, None)


def kind_of(name: str) -> Kind:
    """The registered kind of that name (a built-in one is loaded now if it was not yet); ``KeyError`` naming
    the known ones otherwise."""
    if name not in _KINDS and name in BUILTIN_KINDS:
        import_module(f"{__package__}.{BUILTIN_KINDS[name]}")  # registers itself
    found = _KINDS.get(name)
    if found is None:
        _load_builtin()
        raise KeyError(f"unknown kind {name!r}; kinds are {', '.join(sorted(_KINDS))}")
    return found


def kinds() -> list[Kind]:
    """Every registered kind, ``mcq`` first."""
    _load_builtin()
    return _in_order(_KINDS.values())


def all_stages() -> list[Stage]:
    """Every stage of every kind, each kind's in its own order."""
    return [s for k in kinds() for s in k.stages]


def stage_named(name: str) -> Stage | None:
    """The stage of that name, whichever kind it belongs to (stage names are unique across kinds)."""
    for s in all_stages():
        if s.name == name:
            return s
    return None


def stage_inputs(item: ItemFacts, stage: str) -> str:
    """Hash of what an item stage of the item's kind judges; a review stays valid while it is unchanged."""
    found = kind_of(item.kind).stage(stage)
    if found.scope != "item":
        raise ValueError(f"{stage} is not an item stage")
    return found.inputs(item)


def stage_names() -> tuple[str, ...]:
    return tuple(s.name for s in all_stages())


def kinds_present(ws: Any) -> list[str]:
    """The kinds that have units in the workspace, in the registry's order: what the UI offers pages for."""
    with ws.session() as s:
        in_items = set(s.execute(select(col(Item.kind)).distinct()).scalars())
    return [k.name for k in kinds() if k.name in in_items or (k.has_units is not None and k.has_units(ws))]


def kind_statuses(ws: Any) -> list[Any]:
    """The ``ItemStatus`` rows of every kind whose units live apart from the ``item`` table, kind by kind:
    what ``curate status``, ``curate funnel`` and the dashboard add to the items' own statuses.

    A built-in kind not loaded yet is loaded only if its table holds units (it has no rows otherwise)."""
    for name, units_table in UNITS_APART.items():
        if name not in _KINDS and _table_has_rows(ws, units_table):
            kind_of(name)
    return [status for kind in _in_order(_KINDS.values()) if kind.statuses is not None for status in kind.statuses(ws)]


def _table_has_rows(ws: Any, name: str) -> bool:
    with ws.session() as s:
        return s.execute(select(literal(1)).select_from(table(name)).limit(1)).first() is not None


def _in_order(found: Any) -> list[Kind]:
    return sorted(found, key=lambda k: (k.name != "mcq", k.name))


@contextmanager
def stage_registered(kind: str, stage: Stage, before: str | None = None) -> Iterator[Stage]:
    """Add a stage to a kind for the duration of a block (tests, experiments), then take it out again."""
    target = kind_of(kind)
    target.add_stage(stage, before)
    try:
        yield stage
    finally:
        target.remove_stage(stage.name)


def _load_builtin() -> None:
    for name, package in BUILTIN_KINDS.items():
        if name not in _KINDS:
            import_module(f"{__package__}.{package}")  # registers itself
