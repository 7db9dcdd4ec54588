"""The probe cache: raw outputs keyed by (probe inputs, view, backend, model, estimator, parameters).

Each batch is committed as soon as the backend answers it, so a run that is killed resumes where it
stopped; an edited item has a new input hash, so only its views are probed again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import Engine, select, tuple_
from sqlmodel import Session

from curation import db

from .backends.base import ProbeOutput
from .keys import CacheKey
from .tables import ProbeResult


class ProbeCache:
    """Reads and writes ``probe_result`` rows in the workspace database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get_many(self, keys: Sequence[CacheKey]) -> dict[CacheKey, ProbeOutput]:
        found: dict[CacheKey, ProbeOutput] = {}
        if not keys:
            return found
        wanted = set(keys)
        # rows of one backend/model/estimator/parameters, looked up by input hash in chunks
        by_setting: dict[tuple[str, str, str, str], list[CacheKey]] = {}
        for key in keys:
            by_setting.setdefault((key.backend, key.model, key.estimator, key.params_hash), []).append(key)
        with Session(self.engine) as session:
            for (backend, model, estimator, phash), group in by_setting.items():
                hashes = sorted({k.input_hash for k in group})
                for start in range(0, len(hashes), 500):
                    rows = session.execute(
                        select(ProbeResult.input_hash, ProbeResult.view, ProbeResult.item_id, ProbeResult.output).where(
                            ProbeResult.backend == backend,
                            ProbeResult.model == model,
                            ProbeResult.estimator == estimator,
                            ProbeResult.params_hash == phash,
                            ProbeResult.input_hash.in_(hashes[start : start + 500]),
                        )  # type: ignore[attr-defined]
                    ).all()
                    for input_hash, view, item_id, output in rows:
                        key = CacheKey(input_hash, view, backend, model, estimator, phash)
                        if key in wanted:
                            found[key] = ProbeOutput.from_json(item_id, view, output)
        return found

    def put_many(self, entries: Iterable[tuple[CacheKey, ProbeOutput]]) -> None:
        entries = list(entries)
        if not entries:
            return
        with db.write_session(self.engine) as session:
            keys = [(k.input_hash, k.view, k.backend, k.model, k.estimator, k.params_hash) for k, _ in entries]
            existing = set(
                session.execute(
                    select(
                        ProbeResult.input_hash,
                        ProbeResult.view,
                        ProbeResult.backend,
                        ProbeResult.model,
                        ProbeResult.estimator,
                        ProbeResult.params_hash,
                    ).where(
                        tuple_(ProbeResult.input_hash, ProbeResult.view).in_(  # type: ignore[arg-type]
                            [(k[0], k[1]) for k in keys]
                        )
                    )
                ).all()
            )
            for key, output in entries:
                row_key = (key.input_hash, key.view, key.backend, key.model, key.estimator, key.params_hash)
                if row_key in existing:
                    continue
                existing.add(row_key)
                session.add(
                    ProbeResult(
                        input_hash=key.input_hash,
                        view=key.view,
                        backend=key.backend,
                        model=key.model,
                        estimator=key.estimator,
                        params_hash=key.params_hash,
                        item_id=output.item_id,
                        output=output.to_json(),
                    )
                )
