"""``curate kinds``: the registered benchmark kinds, their modalities, stages and gates."""

from __future__ import annotations

from typing import Any

from .common import JsonFlag, out_console, print_json


def kinds_cmd(json_out: JsonFlag = False) -> None:
    """Every kind this installation knows: its modalities, review stages (in order, with quorum) and gates."""
    from curation.config import ReviewSettings
    from curation.kinds import kinds

    defaults = ReviewSettings()
    rows: list[dict[str, Any]] = [
        {
            "kind": kind.name,
            "modalities": list(kind.modalities),
            "default_modalities": list(kind.default_modalities),
            "stages": [
                {"name": s.name, "scope": s.scope, "quorum": s.quorum(defaults), "help": s.help} for s in kind.stages
            ],
            "gates": list(kind.gates),
        }
        for kind in kinds()
    ]
    if json_out:
        print_json(rows)
        return
    for row in rows:
        out_console.print(
            f"{row['kind']}: modalities {', '.join(row['modalities'])}; gates {', '.join(row['gates']) or '-'}",
            highlight=False,
            markup=False,
        )
        for stage in row["stages"]:
            out_console.print(
                f"  {stage['name']} ({stage['scope']}, quorum {stage['quorum']}) {stage['help']}".rstrip(),
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
