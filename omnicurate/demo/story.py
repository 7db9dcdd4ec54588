"""``curate demo --kind story``: a few small storybook EPUBs (generated, written with ebooklib) imported as
candidate transitions, screened with recorded model outputs (replay), promoted to story items, filtered and
revised by reviewers, audited as Omni-StoryBench App. C does (the audits are the kind's gates) and released
with the duplicate clusters annotated."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

REVIEWERS = {"rev1": ["reviewer"], "rev2": ["reviewer"], "rev3": ["reviewer"], "maya": ["maintainer", "reviewer"]}


def build_story_demo(directory: Path, log: Callable[[str], None] = print):  # type: ignore[no-untyped-def]
    """Create (or refresh) the story demo workspace and return it; running it twice changes nothing."""
    from checker.screen_models import open_screen_models
    from curation.config import CONFIG_NAME
    from curation.screening.books import import_books
    from curation.screening.items import audit_story_items, promote_selected
    from curation.screening.pipeline import run_screen
    from curation.workspace import Workspace

    from .story_books import write_corpus_epubs
    from .story_corpus import build_corpus

    ws = Workspace.init(directory)
    log(f"workspace: {ws.root}")
    known = {p.name for p in ws.people()}
    for name, roles in REVIEWERS.items():
        if name not in known:
            ws.add_person(name, roles, email=f"{name}@demo.omnicurate.org", actor="demo")
    corpus_dir, library = ws.root / "corpus", ws.root / "library"
    if not (corpus_dir / "replay.jsonl").is_file() or not library.is_dir():
        write_corpus_epubs(build_corpus(corpus_dir, books=14), library)
    settings = ws.settings.screen
    if not settings.model.backend:
        settings.model.backend = "replay:corpus/replay.jsonl"
        settings.top = 12
        ws.settings.save(ws.root / CONFIG_NAME)
    report = import_books(ws, [library], actor="demo")
    log(f"books: {report.summary()}")
    funnel = run_screen(ws, settings, None, models=open_screen_models(settings, ws.root))
    for step in funnel.steps:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(step.dropped.items()))
        log(f"screen: {step.step}: {step.inputs} in, {step.kept} kept" + (f" ({reasons})" if reasons else ""))
    promoted = promote_selected(ws, settings, actor="demo")
    log(f"promote: {promoted.summary()}")
    _reviews(ws, corpus_dir, log)
    audit = audit_story_items(ws, actor="demo").to_json()
    log(
        f"audit (App. C): {audit['items']} transitions, {len(audit['duplicate_conditions'])} duplicate condition "
        f"group(s), {len(audit['span_leaks'])} foreign 8-word span(s), reference span median "
        f"{audit['reference_span']['median']:g} words ({len(audit['reference_span']['flagged'])} flagged), "
        f"{len(audit['clusters'])} duplicate cluster(s) over {audit['clustered_items']} transitions"
    )
    _annotated_clusters(audit, log)
    _print_status(ws, log)
    _release(ws, log)
    return ws


def _release(ws, log: Callable[[str], None]) -> None:  # type: ignore[no-untyped-def]
    """Publish the admitted transitions as 0.1.0 in <workspace>/releases/0.1.0; a rerun is a no-op."""
    from exports.story_release import build_story_release

    result = build_story_release(ws, "0.1.0", name="omnicurate-story-demo", actor="demo")
    log(f"release: {result.version} with {result.items} transitions at {result.path}")


def _reviews(ws, corpus_dir: Path, log: Callable[[str], None]) -> None:  # type: ignore[no-untyped-def]
    """Filter every story item (rev1 drops one weak transition), then revise: rev2 corrects two fields of
    the first kept item, rev3 signs the others off as they stand."""
    import json

    from curation.reviews import import_reviews
    from curation.screening.items import KIND, revise_items
    from curation.screening.revise import ReviseRecord
    from curation.workflow import derive_status

    items = sorted(s.id for s in derive_status(ws) if s.kind == KIND)
    if not items:
        return
    dropped = items[-1]
    filters = corpus_dir / "filter_reviews.jsonl"
    filters.write_text(
        "".join(
            json.dumps(
                {"item": i, "stage": "filter", "reviewer": "rev1", "verdict": "drop" if i == dropped else "keep"}
                | ({"reason": "the next page does not follow from this one"} if i == dropped else {})
            )
            + "\n"
            for i in items
        ),
        encoding="utf-8",
    )
    log(f"filter: {import_reviews(ws, filters).summary()} (rev1 dropped {dropped})")
    kept = [i for i in items if i != dropped]
    edits = {"conditions.ambient_sound": "rain on a tin roof", "speech.speed": "slow"}
    records = [(0, ReviseRecord(item=kept[0], reviewer="rev2", edits=edits, note="matched to the picture"))]
    records += [(0, ReviseRecord(item=i, reviewer="rev3")) for i in kept[1:]]
    with ws.session() as s:
        from sqlalchemy import select

        from curation.tables import ReviewRecord

        done = set(s.execute(select(ReviewRecord.subject).where(ReviewRecord.stage == "revise")).scalars())
    records = [r for r in records if f"item:{r[1].item}" not in done]
    if records:
        log(f"revise: {revise_items(ws, records, 'demo').summary()} (rev2 edited {kept[0]}: {', '.join(edits)})")


def _annotated_clusters(audit: dict, log: Callable[[str], None]) -> None:  # type: ignore[type-arg]
    """Duplicate clusters stay in the release, annotated (``[story] duplicates = "annotate"``, as the paper
    did); ``curate audit resolve CLUSTER --keep ITEM`` would keep one and discard the others."""
    for cluster in audit["clusters"]:
        log(f"audit: {cluster['id']} ({', '.join(cluster['items'])}) kept and annotated in the release")


def _print_status(ws, log: Callable[[str], None]) -> None:  # type: ignore[no-untyped-def]
    from collections import Counter

    from curation.workflow import derive_status

    statuses = derive_status(ws)
    for st in statuses:
        if st.state != "admitted":
            log(f"status: {st.id} {st.state} {', '.join(st.reasons)}")
    log("status: " + ", ".join(f"{n} {state}" for state, n in sorted(Counter(s.state for s in statuses).items())))
