"""Media facts in a workspace: measured once per content hash, stored beside the asset, read at every build.

The media gate of a release build judges each shipped file on its stored facts (``curation.mediatools.facts``)
instead of decoding it again. Facts missing for an asset (a workspace older than the facts, a new medium) or
measured by another version of the measuring function are measured on first need, from the store file, and
stored (``curation.audit.measuring``: with the audit's signatures, in worker processes when they are many, after
the background step a large import started); nothing else measures again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from sqlalchemy import select
from sqlmodel import col

from curation.mediatools.facts import FACTS_VERSIONS, Facts, measure
from curation.tables import Asset
from curation.workspace import Workspace

from .tables import HASHES_PER_QUERY as CHUNK
from .tables import MediaFact


def media_facts(ws: Workspace, assets: Iterable[Asset]) -> dict[str, Facts]:
    """Facts per asset hash for the image and audio assets given; a file missing from the store has none.

    A file is measured only when no facts of the current version are stored, and its facts are stored only
    when its bytes still match its content address: a corrupt store file is judged on what it holds now (as
    before facts were kept), and the release's copy step refuses it.
    """
    from .measuring import measure_pending

    wanted = {a.sha256: a for a in assets if a.kind in FACTS_VERSIONS}
    measure_pending(ws, wanted.values())  # after a large import, in worker processes, with the signatures
    found: dict[str, Facts] = {}
    hashes = sorted(wanted)
    with ws.session() as s:
        for start in range(0, len(hashes), CHUNK):
            rows = s.execute(select(MediaFact).where(col(MediaFact.sha256).in_(hashes[start : start + CHUNK])))
            for row in rows.scalars():
                if row.kind == wanted[row.sha256].kind and row.version == FACTS_VERSIONS[row.kind]:
                    found[row.sha256] = row.data
    fresh: list[MediaFact] = []
    for sha in hashes:
        if sha in found:
            continue
        asset = wanted[sha]
        path = ws.asset_path(asset)
        try:
            data = path.read_bytes()
        except OSError:
            continue  # not in the store: the media_files gate reports it
        found[sha] = measure(asset.kind, data, asset.original_name or path.name)
        if hashlib.sha256(data).hexdigest() == sha:
            fresh.append(MediaFact(sha256=sha, kind=asset.kind, version=FACTS_VERSIONS[asset.kind], data=found[sha]))
    if fresh:
        with ws.writing() as s:
            for row in fresh:
                s.merge(row)
    return found
