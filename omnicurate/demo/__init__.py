"""The demo: a small workspace built from bundled items, speech and images, run through the pipeline."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .baseline import baseline_demo

DATA = Path(__file__).parent / "data"
DEMO_PASSWORD = "omnicurate-demo"
PEOPLE = {
    "ann1": ["author"],
    "ann2": ["author"],
    "rev1": ["reviewer"],
    "rev2": ["reviewer"],
    "rev3": ["reviewer"],
    "rev4": ["reviewer"],
    "rev5": ["reviewer"],
    "rev6": ["reviewer"],
    "maya": ["maintainer", "reviewer"],
}
POOL = {
    "ann1, ann2": "A: write the items (ann1 kitchen, stress and bank; ann2 door and traffic)",
    "rev1": "B: grammar #1, the subset checklist, the second listener sign-off",
    "rev2": "C: listener #1, the subset checklist, the second grammar sign-off",
    "rev3": "D: the subset checklist, the blind answer check",
    "rev4": "E: the group review",
}
"""TRIAD's pool of five (§4.4: each query written by one annotator and reviewed by the other four), as the
demo's reviews (``data/reviews.jsonl``) assign the letters of TRIAD C.2; rev5, rev6 and maya are spare."""


def build_demo(  # type: ignore[no-untyped-def]
    directory: Path,
    log: Callable[[str], None] = print,
    show_status: Callable[[list[Any]], None] | None = None,
):
    """Create (or refresh) the demo workspace and return it; running it twice changes nothing.

    ``show_status`` prints the derived status rows (the CLI passes its table printer; the demo knows no shell).
    """
    from curation.items import import_items
    from curation.reviews import import_reviews
    from curation.workspace import Workspace

    ws = Workspace.init(directory)
    log(f"workspace: {ws.root}")
    known = {p.name for p in ws.people()}
    for name, roles in PEOPLE.items():
        if name not in known:
            ws.add_person(name, roles, email=f"{name}@demo.omnicurate.org", actor="demo")
            ws.set_password(name, DEMO_PASSWORD, actor="demo")
    log(f"people: {', '.join(PEOPLE)} (UI password: {DEMO_PASSWORD})")
    log("each item is written by one person and reviewed by four (TRIAD's pool of five):")
    for who, letter in POOL.items():
        log(f"  {who}: {letter}")
    report = import_items(ws, DATA / "items.jsonl", actor="demo")
    log(f"items: {report.summary()}")
    reviews = import_reviews(ws, DATA / "reviews.jsonl")
    log(f"reviews: {reviews.summary()}")
    _adjudication(ws, log)
    _media_and_audit(ws, log)
    _probe_check(ws, log)
    baseline_demo(ws, log)
    if show_status is not None:
        from curation.workflow import derive_status

        show_status(derive_status(ws))
    _build_release(ws, log)
    return ws


def _adjudication(ws, log: Callable[[str], None]) -> None:  # type: ignore[no-untyped-def]
    """Name the items whose checklist verdict depends on the combination rule: held until adjudicated."""
    from curation.adjudication import adjudication_queue

    for dispute in adjudication_queue(ws):
        if dispute.held:
            verdicts = ", ".join(
                f"{rule}: {', '.join(r) or 'well posed'}" for rule, r in sorted(dispute.verdicts.items())
            )
            log(
                f"adjudication: {dispute.item} is held (checklist:disagreement; {verdicts}) until a maintainer "
                f"records a consensus: curate adjudicate {dispute.item} --from REVIEWER --by maya --reason TEXT"
            )


def _probe_check(ws, log: Callable[[str], None]) -> None:  # type: ignore[no-untyped-def]
    """Replay recorded probe outputs as a second opinion; the demo's probe gate warns, never blocks."""
    from checker.backends import open_backend
    from checker.check import check_workspace
    from checker.estimators import EstimatorConfig
    from curation.config import CONFIG_NAME

    if ws.settings.gates.probe == "off":
        ws.settings.gates.probe = "warn"
        ws.settings.save(ws.root / CONFIG_NAME)
    document, *_ = check_workspace(ws, open_backend(f"replay:{DATA / 'probes.jsonl'}"), EstimatorConfig("logprob"))
    verdicts = Counter(item["verdict"] for item in document["items"])
    log(f"probe check (replayed): {', '.join(f'{n} {v}' for v, n in sorted(verdicts.items()))}")
    for row in document["summary"].get("human_agreement", {}).get("disagreements", []):
        log(f"probe check: on {row['item']} the probe says {row['probe']}, the reviewers {row['human']}")


def _build_release(ws, log: Callable[[str], None]) -> None:  # type: ignore[no-untyped-def]
    """Publish the admitted items as release 0.1.0 (partial: gates may hold some back); a rerun is a no-op."""
    from importlib.util import find_spec

    from exports.build import build_release

    if find_spec("pyarrow") is None:
        log("release: skipped (building one needs pyarrow: pip install 'omnicurate[release]')")
        return
    result = build_release(ws, "0.1.0", allow_partial=True, name="omnicurate-demo", actor="demo")
    log(f"release: {result.version} with {result.items} items at {result.path}")


KITCHEN_DRAWING = (
    "the stress group reuses the kitchen drawing with a smile added: the smile is the visual evidence, "
    "so the pictures differ where it matters"
)


def _media_and_audit(ws, log: Callable[[str], None]) -> None:  # type: ignore[no-untyped-def]
    """Normalize the media, run the audits and record the maintainer's decision on the one cluster."""
    from curation.audit.audio import fingerprint_methods
    from curation.audit.normalize import normalize_workspace
    from curation.audit.workspace import audit_workspace, resolutions, resolve

    media = normalize_workspace(ws, actor="demo", log=log).summary()
    log(f"media: {media['created']} normalized now, {media['nonconforming']} non-conforming")
    log(fingerprint_methods())
    report = audit_workspace(ws, actor="demo", log=log)
    decided = {r.target for r in resolutions(ws)}
    for cluster in report.clusters:
        evidence = ", ".join(f"{e.a}~{e.b} {e.method} {e.distance:g}" for e in cluster.edges[:2])
        log(f"audit: cluster {cluster.id} ({', '.join(cluster.items)}; {evidence}, ...)")
        if "kitchen-01-a" in cluster.items and cluster.id not in decided:
            resolve(ws, cluster.id, "maya", distinct=True, reason=KITCHEN_DRAWING)
            log(f"audit: maya resolved {cluster.id} as distinct: {KITCHEN_DRAWING}")
