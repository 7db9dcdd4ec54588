"""Helpers for the Label Studio bridge tests: a seeded workspace, items advanced to a stage, annotating."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import select

from annotation_ui.labelstudio.tables import LsTask
from curation.items import import_items
from curation.reviews import import_reviews
from curation.workspace import Workspace
from devsupport.reviews import PASSING_EXCLUSIONS
from tests.media_factory import item_row, write_items

EMAILS = {
    "ann1": "ann1@omnicurate.test",
    "rev1": "rev1@omnicurate.test",
    "rev2": "rev2@omnicurate.test",
    "rev3": "rev3@omnicurate.test",
}
ITEMS = {"g1-a": "A", "g1-b": "B"}
FORMER = {"grammar": ("gram1", "gram2"), "audio_signoff": ("listen1", "listen2"), "answer_check": ("blind1",)}
"""Who did the stages ``advance`` records (no Label Studio users): TRIAD's separation keeps rev1-3, who annotate
in Label Studio, free for any stage; the checklist is walked by gram1, listen1 and blind1 (B, C and D)."""


def seed(ws: Workspace, folder: Path, revise: dict[str, dict[str, Any]] | None = None) -> None:
    """People (ann1 authors and also reviews; rev1-3 review) and a two-sister group by ann1 (``revise``: changed fields)."""
    known = {p.name for p in ws.people()}
    for name, email in EMAILS.items():
        if name not in known:
            ws.add_person(name, ["author", "reviewer"] if name == "ann1" else ["reviewer"], email=email)
    for name in sorted({n for names in FORMER.values() for n in names} - known):
        ws.add_person(name, ["reviewer"])
    rows = [
        item_row(
            i,
            group="g1",
            answer=a,
            context="Sure, that was a really helpful suggestion.",
            image="media/shared.jpg",
            **(revise or {}).get(i, {}),
        )
        for i, a in ITEMS.items()
    ]
    import_items(ws, write_items(folder, rows))


def _consistent(answer: str) -> dict[str, list[str]]:
    others = [o for o in "ABCD" if o != answer]
    single, pair = sorted([answer, *others[:2]]), sorted([answer, others[0]])
    return {
        "text": single,
        "image": single,
        "audio": single,
        "text+image": pair,
        "text+audio": pair,
        "image+audio": pair,
        "text+image+audio": [answer],
    }


def advance(ws: Workspace, folder: Path, to_stage: str) -> None:
    """Record passing reviews for every stage before ``to_stage`` (by the ``FORMER`` people), so the items wait there."""
    lines: list[dict[str, Any]] = []
    order = ["grammar", "audio_signoff", "subset_checklist", "answer_check", "group_integration"]
    for stage in order[: order.index(to_stage)]:
        for item, answer in ITEMS.items():
            if stage == "grammar":  # two reviewers sign off (TRIAD §4.2, the default quorum)
                for r in FORMER["grammar"]:
                    lines.append({"item": item, "stage": stage, "reviewer": r, "verdict": "pass"})
            elif stage == "audio_signoff":
                for r in FORMER["audio_signoff"]:
                    lines.append(
                        {
                            "item": item,
                            "stage": stage,
                            "reviewer": r,
                            "scores": {"naturalness": 4, "clarity": 4, "artefacts": 4},
                        }
                    )
            elif stage == "subset_checklist":
                for r in ("gram1", "listen1", "blind1"):
                    lines.append(
                        {
                            "item": item,
                            "stage": stage,
                            "reviewer": r,
                            "consistent": _consistent(answer),
                            "exclusions": dict(PASSING_EXCLUSIONS),
                        }
                    )
            elif stage == "answer_check":
                lines.append({"item": item, "stage": stage, "reviewer": "blind1", "answer": answer})
    path = folder / f"advance-{to_stage}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_reviews(ws, path)


def tasks(ws: Workspace, stage: str, state: str = "active") -> dict[tuple[str, str | None], int]:
    """(subject, view) -> Label Studio task id of the stage's tasks in this state."""
    with ws.session() as s:
        rows = s.execute(select(LsTask).where(LsTask.project_key == f"stage:{stage}", LsTask.state == state)).scalars()
        return {(r.subject, r.view): r.task_id for r in rows}


def choice(name: str, to: str, *values: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": to, "type": "choices", "value": {"choices": list(values)}}


def rating(name: str, value: int, to: str = "audio") -> dict[str, Any]:
    return {"from_name": name, "to_name": to, "type": "rating", "value": {"rating": value}}


def note(text: str, to: str) -> dict[str, Any]:
    return {"from_name": "note", "to_name": to, "type": "textarea", "value": {"text": [text]}}


def attested(to: str = "question", **verdicts: str) -> list[dict[str, Any]]:
    """The subset checklist's exclusion-rule answers of one view's annotation: every default rule ``pass``
    unless VERDICTS says otherwise (``exclusion_<rule>`` controls)."""
    return [choice(f"exclusion_{rule}", to, v) for rule, v in {**PASSING_EXCLUSIONS, **verdicts}.items()]
