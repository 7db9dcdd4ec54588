"""Helpers of the annotation UI tests: people, passwords, and pushing items through stages via the domain."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from curation.workspace import Workspace
from devsupport.reviews import PASSING_EXCLUSIONS

PASSWORD = "correct-horse-1"
CONTEXT = "Sure, that was a really helpful suggestion."
APP = Path(__file__).resolve().parents[2] / "annotation_ui" / "app.py"
SERVED = APP.parent / "entry" / "main.py"
"""What ``curate ui`` serves (it runs APP; AppTest runs APP itself)."""
PEOPLE = {
    "ann1": ["author", "reviewer"],
    "ann2": ["author"],
    "rev1": ["reviewer"],
    "rev2": ["reviewer"],
    "rev3": ["reviewer"],
    "rev4": ["reviewer"],
    "rev5": ["reviewer"],
    "maya": ["maintainer", "reviewer"],
}


def add_people(ws: Workspace) -> None:
    for name, roles in PEOPLE.items():
        ws.add_person(name, roles, email=f"{name}@example.org")
        ws.set_password(name, PASSWORD)


def passing_record(item: str, stage: str, reviewer: str, answer: str, options: str = "ABCD") -> dict:
    """A review record that passes STAGE for an item whose label is ANSWER."""
    if stage == "grammar":
        return {"item": item, "stage": stage, "reviewer": reviewer, "verdict": "pass"}
    if stage == "audio_signoff":
        return {
            "item": item,
            "stage": stage,
            "reviewer": reviewer,
            "scores": dict.fromkeys(("naturalness", "clarity", "artefacts"), 4),
        }
    if stage == "subset_checklist":
        views = ["text", "image", "audio", "text+image", "text+audio", "image+audio"]
        return {
            "item": item,
            "stage": stage,
            "reviewer": reviewer,
            "consistent": {**{v: list(options) for v in views}, "text+image+audio": [answer]},
            "exclusions": dict(PASSING_EXCLUSIONS),
        }
    if stage == "answer_check":
        return {"item": item, "stage": stage, "reviewer": reviewer, "answer": answer}
    raise ValueError(stage)


def advance(ws: Workspace, item: str, answer: str, through: str) -> None:
    """Record passing reviews for every item stage up to and including THROUGH, with TRIAD's separation of roles
    (grammar rev1, rev2; listeners rev3, rev4; checklist rev1, rev2, rev3; blind check rev5; maya stays free for
    the group)."""
    from annotation_ui.logic import submit_review

    plan = [
        ("grammar", ["rev1", "rev2"]),
        ("audio_signoff", ["rev3", "rev4"]),
        ("subset_checklist", ["rev1", "rev2", "rev3"]),
        ("answer_check", ["rev5"]),
    ]
    for stage, reviewers in plan:
        for reviewer in reviewers:
            submit_review(ws, passing_record(item, stage, reviewer, answer))
        if stage == through:
            return


def chromium_path() -> str | None:
    """``$CURATE_CHROMIUM``, else Debian's chromium on PATH."""
    candidate = os.environ.get("CURATE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return candidate if Path(candidate).is_file() else None


def promote_story(ws: Workspace, folder: Path, books: int = 8, top: int = 3) -> list[str]:
    """Story transitions screened from a generated corpus (recorded model outputs) and promoted to items,
    with reviewers rev1 and rev2 (the Label Studio template's e-mails); returns the item ids."""
    from checker.structured import ReplayStructured
    from curation.screening.importer import import_candidates
    from curation.screening.items import promote_selected
    from curation.screening.pipeline import run_screen
    from curation.screening.settings import ScreenSettings
    from omnicurate.demo.story_corpus import build_corpus

    corpus = build_corpus(folder, books=books)
    known = {p.name for p in ws.people()}
    for name in ("rev1", "rev2"):
        if name not in known:
            ws.add_person(name, ["reviewer"], email=f"{name}@omnicurate.test")
    import_candidates(ws, corpus.candidates)
    settings = ScreenSettings(top=top)
    run_screen(ws, settings, ReplayStructured(str(corpus.replay)))
    return sorted(promote_selected(ws, settings).created)


def attest_rules(at, item: str, verdicts: dict[str, str] | None = None) -> None:  # type: ignore[no-untyped-def]
    """Answer the subset-checklist page's exclusion rules (every default rule ``pass`` unless VERDICTS says)."""
    from annotation_ui.exclusion_form import widget_key

    for rule, verdict in {**PASSING_EXCLUSIONS, **(verdicts or {})}.items():
        at.radio(key=widget_key(item, rule)).set_value(verdict)
    at.run()
