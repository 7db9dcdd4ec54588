"""Probe every view of every item through a backend, through the cache, and judge each item."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .backends.base import ProbeBackend, ProbeOutput
from .estimators import (
    EstimatorConfig,
    ViewEstimate,
    estimate_from_probs,
    estimate_from_samples,
    probs_at_temperature,
)
from .keys import CacheKey, params_hash
from .prompts import AnswerFormat, ProbeRequest, build_request
from .verdicts import ItemResult
from .views import FULL_VIEW, ProbeItem

if TYPE_CHECKING:  # the cache needs the database libraries; a bare run (GPU check) does not
    from .cache import ProbeCache


@dataclass
class RunStats:
    """What a run cost; cached views cost nothing."""

    items: int = 0
    views_probed: int = 0
    views_cached: int = 0
    model_calls: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    audio_routes: dict[str, int] = field(default_factory=dict)

    def add(self, other: RunStats) -> None:
        """Add another run's costs over the same items (a second probe)."""
        self.views_probed += other.views_probed
        self.views_cached += other.views_cached
        self.model_calls += other.model_calls
        self.generated_tokens += other.generated_tokens
        self.seconds += other.seconds
        for route, n in other.audio_routes.items():
            self.audio_routes[route] = self.audio_routes.get(route, 0) + n

    def as_json(self) -> dict[str, Any]:
        rate = self.items / self.seconds if self.seconds > 0 else None
        return {
            "items": self.items,
            "views_probed": self.views_probed,
            "views_cached": self.views_cached,
            "model_calls": self.model_calls,
            "generated_tokens": self.generated_tokens,
            "seconds": round(self.seconds, 3),
            "items_per_second": round(rate, 3) if rate else None,
            "audio_routes": self.audio_routes,
        }


def estimate(
    output: ProbeOutput, option_keys: Sequence[str], config: EstimatorConfig, full_view: str = FULL_VIEW
) -> ViewEstimate:
    """Samples are counted; replayed probabilities are used as they are; log-probabilities get T applied."""
    if output.samples is not None:
        return estimate_from_samples(output.view, output.samples, option_keys, config.tau, output.audio_route)
    if output.probs is not None:
        return estimate_from_probs(output.view, output.probs, option_keys, config, output.audio_route, full_view)
    if output.logprobs is not None:
        probs = probs_at_temperature(output.logprobs, config.temperature)
        return estimate_from_probs(output.view, probs, option_keys, config, output.audio_route, full_view)
    raise ValueError(f"probe output for {output.item_id} {output.view} carries no answer")


def run_check(
    items: Sequence[ProbeItem],
    backend: ProbeBackend,
    config: EstimatorConfig,
    cache: ProbeCache | None = None,
    *,
    answer_format: AnswerFormat = "letter",
    on_item_done: Callable[[int], None] | None = None,
) -> tuple[list[ItemResult], RunStats]:
    """Judge ``items``; views already in the cache are not probed again.

    Views the backend does not answer (a replay file without them) are left out and listed as the
    result's ``unprobed`` views: Definition 1 is then applied over the probed views only.

    Requests go to the backend in batches of whole items (``backend.batch_size`` requests at least), and
    each answered batch is written to the cache before the next one is sent.
    """
    started = time.perf_counter()
    backend.check_items(items)  # a refused replay file probes and caches nothing
    stats = RunStats(items=len(items))
    setting = {**config.probe_parameters(), "format": answer_format, "audio_input": backend.audio_input}
    phash = params_hash(setting)

    requests: dict[str, list[ProbeRequest]] = {}
    keys: dict[tuple[str, str], CacheKey] = {}
    probed = {item.id: backend.probed_views(item.id, item.views) for item in items}
    for item in items:
        requests[item.id] = [
            build_request(
                item, view, audio_input=backend.audio_input, fmt=answer_format, seed=config.seed_for(item.id, view)
            )
            for view in probed[item.id]
        ]
        for view in probed[item.id]:
            keys[(item.id, view)] = CacheKey(item.input_hash, view, backend.kind, backend.model_id, config.name, phash)

    outputs: dict[tuple[str, str], ProbeOutput] = {}
    if cache is not None:
        cached = cache.get_many(list(keys.values()))
        for (item_id, view), key in keys.items():
            if key in cached:
                output = cached[key]
                output.item_id = item_id
                outputs[(item_id, view)] = output
    stats.views_cached = len(outputs)

    pending_items = [item for item in items if any((item.id, v) not in outputs for v in probed[item.id])]
    if on_item_done:
        on_item_done(len(items) - len(pending_items))
    batch: list[ProbeRequest] = []
    batch_items: list[str] = []

    def flush() -> None:
        answered = backend.probe(batch, config)
        entries = []
        for request, output in zip(batch, answered, strict=True):
            outputs[(request.item_id, request.view)] = output
            entries.append((keys[(request.item_id, request.view)], output))
            stats.views_probed += 1
            stats.model_calls += output.model_calls
            stats.generated_tokens += output.generated_tokens
        if cache is not None:
            cache.put_many(entries)
        if on_item_done:
            on_item_done(len(batch_items))
        batch.clear()
        batch_items.clear()

    for item in pending_items:
        batch.extend(r for r in requests[item.id] if (item.id, r.view) not in outputs)
        batch_items.append(item.id)
        if len(batch) >= backend.batch_size:
            flush()
    if batch:
        flush()

    results = []
    for item in items:
        views = {}
        for view in probed[item.id]:
            views[view] = estimate(outputs[(item.id, view)], tuple(item.options), config, item.full_view)
            route = outputs[(item.id, view)].audio_route
            stats.audio_routes[route] = stats.audio_routes.get(route, 0) + 1
        unprobed = [v for v in item.views if v not in views]
        results.append(ItemResult(item.id, item.answer, views, unprobed=unprobed))
    stats.seconds = time.perf_counter() - started
    return results, stats
