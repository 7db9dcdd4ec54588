"""The registry of kinds: every part of omnicurate that loops over stages or gates asks here."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._parts import Kind, Stage

_KINDS: dict[str, Kind] = {}


def register_kind(kind: Kind) -> Kind:
    """Make a kind known; its stage names must not clash with another kind's (records name only a stage)."""
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
    """The registered kind of that name; ``KeyError`` naming the known ones otherwise."""
    _load_builtin()
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"unknown kind {name!r}; kinds are {', '.join(sorted(_KINDS))}") from None


def kinds() -> list[Kind]:
    """Every registered kind, ``mcq`` first."""
    _load_builtin()
    return sorted(_KINDS.values(), key=lambda k: (k.name != "mcq", k.name))


def all_stages() -> list[Stage]:
    """Every stage of every kind, each kind's in its own order."""
    return [s for k in kinds() for s in k.stages]


def stage_named(name: str) -> Stage | None:
    """The stage of that name, whichever kind it belongs to (stage names are unique across kinds)."""
    for s in all_stages():
        if s.name == name:
            return s
    return None


def stage_names() -> tuple[str, ...]:
    return tuple(s.name for s in all_stages())


def kinds_present(ws: Any) -> list[str]:
    """The kinds that have units in the workspace, in the registry's order: what the UI offers pages for."""
    from sqlalchemy import select
    from sqlmodel import col

    from ..tables import Item

    with ws.session() as s:
        in_items = set(s.execute(select(col(Item.kind)).distinct()).scalars())
    return [k.name for k in kinds() if k.name in in_items or (k.has_units is not None and k.has_units(ws))]


def kind_statuses(ws: Any) -> list[Any]:
    """The ``ItemStatus`` rows of every kind whose units live apart from the ``item`` table, kind by kind:
    what ``curate status``, ``curate funnel`` and the dashboard add to the items' own statuses."""
    return [status for kind in kinds() if kind.statuses is not None for status in kind.statuses(ws)]


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
    if "mcq" not in _KINDS:
        from . import mcq  # noqa: F401  (registers itself)
    if "judge_task" not in _KINDS:
        from . import judge  # noqa: F401  (registers itself)
    if "story_transition" not in _KINDS:
        from . import story  # noqa: F401  (registers itself)
