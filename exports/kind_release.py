"""Which kind a release is built for, and its builder: looked up in the kinds registry, never in a list of
names here, so a kind that declares a ``ReleaseLayout.builder`` is releasable from `curate release build`.

A workspace that holds units of one kind needs no ``--kind``; one that holds several must name it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from curation.errors import CheckFailed, Problem, ValidationFailed
from curation.kinds import Kind, kind_of, kind_statuses, kinds
from curation.workflow import derive_status
from curation.workspace import Workspace

from .publish import BuildResult


def releasable_kinds() -> list[Kind]:
    """Every registered kind whose release layout names a builder."""
    return [k for k in kinds() if k.release is not None and k.release.builder]


def _kind_named(name: str) -> Kind:
    """The kind of that name, or of that first word (``story`` for ``story_transition``, as `curate demo`
    names it) when one kind's name starts so."""
    known = ", ".join(k.name for k in releasable_kinds())
    short = [k for k in kinds() if k.name.split("_")[0] == name]
    try:
        kind = kind_of(short[0].name if len(short) == 1 and name not in {k.name for k in kinds()} else name)
    except KeyError:
        raise ValidationFailed([Problem(f"unknown kind {name!r}; kinds are {known}", "--kind")]) from None
    if kind.release is None or not kind.release.builder:
        raise ValidationFailed([Problem(f"kind {name!r} has no release layout; releasable kinds: {known}", "--kind")])
    return kind


def held_kinds(ws: Workspace) -> list[str]:
    """The kinds of the units this workspace holds (items of the item table and the kinds' own units)."""
    held = {s.kind for s in derive_status(ws) + kind_statuses(ws)}
    return [k.name for k in kinds() if k.name in held]


def release_kind(ws: Workspace, requested: str | None) -> Kind:
    """The kind to release: ``--kind`` if given, else the one kind the workspace holds."""
    if requested is not None:
        return _kind_named(requested)
    held = held_kinds(ws)
    if len(held) == 1:
        return _kind_named(held[0])
    if not held:
        raise CheckFailed("release refused: the workspace holds no item or task yet; import some first")
    raise ValidationFailed(
        [Problem(f"the workspace holds several kinds ({', '.join(held)}); name one with --kind", "--kind")]
    )


def build_kind_release(
    ws: Workspace, kind: Kind, version: str, log: Callable[[str], None] = lambda _: None, **options: Any
) -> BuildResult:
    """Build VERSION with the kind's builder; an option its builder does not take (``--allow-partial`` for a
    kind without item gates, release notes for one without a card section) is refused by name."""
    assert kind.release is not None and kind.release.builder
    module, _, function = kind.release.builder.partition(":")
    builder: Callable[..., BuildResult] = getattr(importlib.import_module(module), function)
    accepted = inspect.signature(builder).parameters
    unused = [name for name, value in options.items() if name not in accepted and value not in (None, "", False)]
    if unused:
        flags = ", ".join("--" + name.replace("_", "-") for name in unused)
        raise ValidationFailed([Problem(f"{flags} does not apply to a {kind.name} release", flags)])
    if "log" in accepted:
        options["log"] = log
    return builder(ws, version, **{k: v for k, v in options.items() if k in accepted})


def manifest_kind(folder: Path) -> str | None:
    """The kind a release folder's manifest names (None when it cannot be read)."""
    import json

    try:
        return str(json.loads((folder / "manifest.json").read_text(encoding="utf-8")).get("kind", "mcq"))
    except (OSError, ValueError, AttributeError):
        return None
