"""What seeing labels costs a reviewer: the blind checks they could still do, and would give up by looking.

It reads the derivation (which stages passed, whose records count) and the exposures (who already knows a
label), so it sits above both: the exposures are a floor the derivation itself reads (``curation.exposure``).
"""

from __future__ import annotations

from collections.abc import Iterable

from .derived import DerivedState
from .exposure import exposed_items
from .kinds import kind_of
from .workspace import Workspace


def blind_checks_given_up(ws: Workspace, state: DerivedState, person: str, items: Iterable[str]) -> list[str]:
    """The items among ``items`` whose blind check ``person`` could still do, and would give up by seeing their
    labels: not yet exposed, a reviewer allowed by the blind stage's separation rule, the stage not yet passed,
    and no record of theirs there yet. What a page that reveals labels names before showing them."""
    wanted = [i for i in dict.fromkeys(items) if i in state.facts and i not in state.discarded]
    if not wanted or "reviewer" not in ws.person(person).role_set:
        return []
    with ws.session() as s:
        known = exposed_items(s, person, wanted)
    out = []
    for item_id in wanted:
        if item_id in known:
            continue
        item = state.facts[item_id]
        for stage in kind_of(item.kind).item_stages:
            if not stage.blind or not stage.applies(item) or state.stage_passed(item_id, stage.name):
                continue
            rule = stage.separation_rule(state.settings)
            if rule(person, item, state.separation_records(item_id)) is not None:
                continue
            if any(r.reviewer == person for r in state.records(item_id, stage.name)):
                continue
            out.append(item_id)
            break
    return out
