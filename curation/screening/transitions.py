"""The screened transitions as whole records: candidate pages, the model's proposals with provenance,
and the scores; and the App. C audit over them."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from curation.workspace import Workspace

from .audits import AuditedTransition, StoryAudit, audit_transitions
from .pipeline import selected_candidates
from .settings import ScreenSettings
from .tables import Candidate, ScreenResult


def transition_records(ws: Workspace, ids: list[str]) -> list[dict[str, Any]]:
    """One record per candidate id (in the given order): its pages, source, proposals and scores."""
    records: dict[str, dict[str, Any]] = {}
    with ws.session() as s:
        chunks = [ids[start : start + 900] for start in range(0, len(ids), 900)]
        for chunk in chunks:
            for c in s.execute(select(Candidate).where(col(Candidate.id).in_(chunk))).scalars():
                records[c.id] = {
                    "id": c.id,
                    "book": c.book,
                    "page": c.page,
                    "title": c.title,
                    "source": {"collection": c.collection, "license": c.license, "url": c.source_url},
                    "current": {"image": c.current_image, "text": c.current_text},
                    "next": {"image": c.next_image, "text": c.next_text},
                    "annotations": dict(c.annotations or {}),
                }
                if c.origin:
                    records[c.id]["origin"] = c.origin
        query = select(col(ScreenResult.candidate_id), col(ScreenResult.step), col(ScreenResult.data))
        steps = [
            row
            for chunk in chunks
            for row in s.execute(
                query.where(
                    col(ScreenResult.step).in_(("annotate", "score")), col(ScreenResult.candidate_id).in_(chunk)
                )
            )
        ]
        for cid, step, data in steps:
            if cid in records and data:
                if step == "annotate":
                    records[cid]["annotations"].update(data.get("annotations", {}))
                else:
                    records[cid]["scores"] = data.get("scores")
                    records[cid]["score_provenance"] = data.get("provenance")
    return [records[i] for i in ids if i in records]


@lru_cache(maxsize=100_000)
def image_phash(path: str) -> int | None:
    """64-bit pHash of an illustration (None when it cannot be read)."""
    import imagehash

    from curation.errors import MediaError
    from curation.media import PIL_HARD_LIMIT, open_image

    try:
        with open_image(Path(path), path, PIL_HARD_LIMIT) as img:
            bits = imagehash.phash(img.convert("RGB")).hash.flatten()
    except (MediaError, OSError, SyntaxError, ValueError):
        return None
    value = 0
    for bit in bits:
        value = (value << 1) | int(bit)
    return value


def audited(record: dict[str, Any]) -> AuditedTransition:
    annotations = record.get("annotations", {})
    meta = (annotations.get("book_meta") or {}).get("value") or {}
    conditions = (annotations.get("conditions") or {}).get("value") or {}
    return AuditedTransition(
        id=record["id"],
        book=record["book"],
        page=record["page"],
        current_text=record["current"]["text"],
        next_text=record["next"]["text"],
        topic=meta.get("topic", ""),
        conditions=conditions,
        image_hashes=(image_phash(record["current"]["image"]), image_phash(record["next"]["image"])),
    )


def audit_selected(ws: Workspace, settings: ScreenSettings) -> StoryAudit:
    """App. C over the transitions the last screen selected (their own pages are the page universe)."""
    records = transition_records(ws, selected_candidates(ws, settings))
    return audit_transitions([audited(r) for r in records])
