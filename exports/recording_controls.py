"""``recording_controls.json``: TRIAD B.5's recording controls documented per audio-perturbed group.

For each released audio-perturbed group whose clips name an actor (speakers), a session or equipment, whether
the released sisters' clips share each named control, from the workspace's records only (never the names or
the values themselves). A release without such a group has no such file, so releases of workspaces that record
none of this are unchanged.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from curation.audio_production.controls import CONTROLS, audio_groups, control_matches
from curation.audio_production.loaded import load_audio_facts
from curation.workspace import Workspace

from .writer import ReleaseWriter

PATH = "recording_controls.json"


def recording_controls(ws: Workspace, released: Collection[str]) -> list[dict[str, Any]]:
    """One entry per released audio-perturbed group whose clips name a control, by group id."""
    out = []
    for group, sisters in audio_groups(load_audio_facts(ws), set(released)).items():
        matches = control_matches(sisters)
        if matches:
            out.append(
                {
                    "group": group,
                    "sisters": len(sisters),
                    "controls": matches,
                    "match": all(matches.values()),
                }
            )
    return out


def write_recording_controls(writer: ReleaseWriter, ws: Workspace, released: Collection[str]) -> list[dict[str, Any]]:
    """Write the file when some released group names a control; the entries (for the card)."""
    groups = recording_controls(ws, released)
    if groups:
        writer.write_json(
            PATH,
            {
                "controls": list(CONTROLS),
                "note": "actor: the clip's speakers; a control none of a group's clips names is not listed",
                "groups": groups,
            },
        )
    return groups


def card_lines(groups: Collection[dict[str, Any]]) -> list[str]:
    """The card's sentence on recording controls; none without a documented group."""
    if not groups:
        return []
    matched = sum(1 for g in groups if g["match"])
    return [
        f"Recording controls (TRIAD B.5): {matched} of {len(groups)} audio-perturbed group(s) whose clips name "
        f"an actor, session or equipment share every named control; per group in `{PATH}`.",
        "",
    ]
