"""Duplicate clusters in a story release: the card's account of them and `release verify`'s check that the
annotations in ``data/transitions.jsonl`` agree with the clusters ``audit.json`` lists; and the card's
attributions of the books.

Omni-StoryBench kept its 50 flagged clusters (112 of 900 transitions) and released the cluster annotations
(App. C); ``[story] duplicates = "annotate"`` does the same, ``"block"`` releases only resolved clusters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

AUDIT_FILE = "audit.json"
COLUMN = "duplicate_clusters"


def duplicate_section(audit: dict[str, Any]) -> list[str]:
    """Card lines: the policy, the clusters and their members, and how to test the ranking without them."""
    clusters = audit.get("clusters", [])
    policy = audit.get("duplicates", "annotate")
    lines = ["### Duplicate clusters", ""]
    if not clusters:
        return [*lines, "No transition of this release is in a duplicate cluster."]
    kept = (
        'kept and annotated (`[story] duplicates = "annotate"`, as Omni-StoryBench did)'
        if policy == "annotate"
        else 'released after a maintainer resolved them (`[story] duplicates = "block"`)'
    )
    lines += [
        f"{len(clusters)} cluster(s) over {audit.get('clustered_items', 0)} transitions are {kept}: each transition "
        f"names its clusters in `{COLUMN}`, and `{AUDIT_FILE}` gives every cluster's members and evidence. "
        "`curate story study sensitivity` recomputes a system ranking without them.",
        "",
    ]
    lines += [f"- {c['id']}: {', '.join(c['items'])}" for c in clusters]
    return lines


def check_duplicate_annotations(folder: Path, items: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(kind, file, detail) for each transition whose ``duplicate_clusters`` differs from the clusters of
    ``audit.json`` that hold it, and for each cluster naming a transition the release does not have."""
    path = folder / AUDIT_FILE
    if not path.is_file() or path.is_symlink():
        return []  # a release without its audit (laid out by hand, or older): the file list check speaks
    try:
        clusters = json.loads(path.read_text(encoding="utf-8")).get("clusters", [])
        members = {str(c["id"]): [str(i) for i in c["items"]] for c in clusters}
    except (ValueError, AttributeError, KeyError, TypeError, RecursionError) as exc:
        return [("invalid", AUDIT_FILE, f"its clusters are not readable ({exc})")]
    problems: list[tuple[str, str, str]] = []
    expected: dict[str, list[str]] = {}
    for cluster, ids in sorted(members.items()):
        for item in ids:
            if item not in items:
                problems.append(("invalid", AUDIT_FILE, f"cluster {cluster} names {item}, not in this release"))
            expected.setdefault(item, []).append(cluster)
    for item_id, item in sorted(items.items()):
        annotated = item.get(COLUMN, [])  # absent in releases older than the column: no cluster then
        if not isinstance(annotated, list) or sorted(map(str, annotated)) != sorted(expected.get(item_id, [])):
            problems.append(
                (
                    "invalid",
                    "data/transitions.jsonl",
                    f"transition {item_id}: {COLUMN} {annotated!r} differs from audit.json's "
                    f"{sorted(expected.get(item_id, []))!r}",
                )
            )
    return problems


def attribution_lines(records: list[dict[str, Any]]) -> list[str]:
    """The card's attributions: each book's credit line as its package gave it (``curate import books``)."""
    found = {
        (r["book"], r["title"]): r["origin"]["attribution"]
        for r in records
        if r.get("origin") and r["origin"].get("attribution")
    }
    if not found:
        return []
    return ["", "### Attributions", ""] + [
        f"- {title} ({book}): {credit}" for (book, title), credit in sorted(found.items())
    ]
