# SQLModel declares columns as their Python values, so SQL expressions over them (``JudgeSample.kind ==
# kind``, ``.desc()``) read as bools and ints to mypy; the queries are checked by the tests on both databases.
# mypy: disable-error-code="arg-type,call-overload,union-attr"
"""The duplicate audit of videos: near-duplicate videos among tasks' inputs and responses."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from curation.tables import Asset
from curation.workspace import Workspace

from .task_store import responses, tasks

VIDEO_SIGNATURE_VERSION = 1


def video_duplicates(ws: Workspace, radius: int | None = None) -> dict[str, Any]:
    """Near-duplicate videos among tasks' inputs and responses, by keyframe perceptual hashes (cached per
    asset in ``media_signature``); pairs whose owners all belong to one task are left out, as every audit
    leaves out pairs within one group."""
    from curation.audit.tables import MediaSignature
    from curation.mediatools.video import KEYFRAME_RADIUS, keyframe_hashes, near_duplicate_videos

    owners: dict[str, set[str]] = {}
    for t in tasks(ws):
        for modality, sha in t.inputs.items():
            if modality == "video":
                owners.setdefault(sha, set()).add(t.id)
    for r in responses(ws):
        if r.modality == "video" and r.asset:
            owners.setdefault(r.asset, set()).add(r.task)
    with ws.session() as s:
        cached = {
            m.sha256: [int(h, 16) for h in m.data["keyframes"]]
            for m in s.execute(
                select(MediaSignature).where(
                    MediaSignature.kind == "video", MediaSignature.version == VIDEO_SIGNATURE_VERSION
                )
            ).scalars()
        }
        assets = {a.sha256: a for a in s.execute(select(Asset).where(Asset.kind == "video")).scalars()}
    fresh = {sha: keyframe_hashes(ws.asset_path(assets[sha])) for sha in owners if sha not in cached}
    if fresh:
        with ws.writing() as s:
            for sha, hashes in fresh.items():
                if s.get(MediaSignature, sha) is None:
                    data = {"keyframes": [f"{h:016x}" for h in hashes]}
                    s.add(MediaSignature(sha256=sha, kind="video", version=VIDEO_SIGNATURE_VERSION, data=data))
    signatures = {sha: cached.get(sha) or fresh[sha] for sha in owners}
    pairs = []
    for a, b, distance in near_duplicate_videos(signatures, KEYFRAME_RADIUS if radius is None else radius):
        if len(owners[a] | owners[b]) == 1:
            continue  # within one task (an edit of its own input, say)
        pairs.append({"a": a, "b": b, "tasks": sorted(owners[a] | owners[b]), "distance": distance})
    return {"videos": len(signatures), "computed": len(fresh), "pairs": pairs}
