"""``curate demo --kind story``: a few dozen candidate transitions from generated books, screened with
recorded model outputs (replay), audited as Omni-StoryBench App. C does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

REVIEWERS = {"rev1": ["reviewer"], "rev2": ["reviewer"], "rev3": ["reviewer"], "maya": ["maintainer", "reviewer"]}


def build_story_demo(directory: Path, log: Callable[[str], None] = print):  # type: ignore[no-untyped-def]
    """Create (or refresh) the story demo workspace and return it; running it twice changes nothing."""
    from checker.structured import open_structured_model
    from curation.config import CONFIG_NAME
    from curation.screening.importer import import_candidates
    from curation.screening.pipeline import run_screen
    from curation.screening.transitions import audit_selected
    from curation.workspace import Workspace

    from .story_corpus import build_corpus

    ws = Workspace.init(directory)
    log(f"workspace: {ws.root}")
    known = {p.name for p in ws.people()}
    for name, roles in REVIEWERS.items():
        if name not in known:
            ws.add_person(name, roles, email=f"{name}@demo.omnicurate.org", actor="demo")
    corpus_dir = ws.root / "corpus"
    if not (corpus_dir / "candidates.jsonl").is_file():
        build_corpus(corpus_dir, books=10)
    settings = ws.settings.screen
    if not settings.model.backend:
        settings.model.backend = "replay:corpus/replay.jsonl"
        settings.top = 8
        ws.settings.save(ws.root / CONFIG_NAME)
    report = import_candidates(ws, corpus_dir / "candidates.jsonl", actor="demo")
    log(f"candidates: {report.summary()}")
    model = open_structured_model(settings.model.backend, ws.root)
    funnel = run_screen(ws, settings, model)
    for step in funnel.steps:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(step.dropped.items()))
        log(f"screen: {step.step}: {step.inputs} in, {step.kept} kept" + (f" ({reasons})" if reasons else ""))
    audit = audit_selected(ws, settings).to_json()
    log(
        f"audit (App. C): {audit['items']} transitions, {len(audit['duplicate_conditions'])} duplicate condition "
        f"group(s), {len(audit['span_leaks'])} foreign 8-word span(s), reference span median "
        f"{audit['reference_span']['median']:g} words ({len(audit['reference_span']['flagged'])} flagged), "
        f"{len(audit['clusters'])} duplicate cluster(s)"
    )
    return ws
