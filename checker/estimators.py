"""From raw probe outputs to a view's consistent option set (TRIAD App. D.2, G.4, G.5).

``sample``: K answers at temperature T; an option is consistent when chosen in at least ⌈τK⌉ of them
(K = 5 for every strict view, 10 for the full view, T = 0.7, τ = 0.2).
``logprob``: one constrained prefill gives the option distribution; with p_T the probability at the
sampling temperature, an option is consistent when P(Binomial(K, p_T) ≥ ⌈τK⌉) ≥ 0.5 (rule ``binomial``,
threshold configurable) or when p_T ≥ τ (rule ``threshold``). Probabilities from a replay file are used
as they are.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, Literal

from .prompts import parse_answer
from .views import FULL_VIEW, PROBE_VIEWS

EstimatorName = Literal["sample", "logprob"]
ConsistencyRule = Literal["binomial", "threshold"]
ESTIMATORS: tuple[str, ...] = ("sample", "logprob")
RULES: tuple[str, ...] = ("binomial", "threshold")


@dataclass(frozen=True)
class EstimatorConfig:
    """The estimator and its parameters; defaults are the reference checker's."""

    name: EstimatorName = "sample"
    k_strict: int = 5
    k_full: int = 10
    temperature: float = 0.7
    tau: float = 0.2
    seed: int = 0
    rule: ConsistencyRule = "binomial"
    min_probability: float = 0.5

    def __post_init__(self) -> None:
        if self.name not in ESTIMATORS:
            raise ValueError(f"unknown estimator {self.name!r}; expected one of {', '.join(ESTIMATORS)}")
        if self.rule not in RULES:
            raise ValueError(f"unknown consistency rule {self.rule!r}; expected one of {', '.join(RULES)}")
        if self.k_strict < 1 or self.k_full < 1:
            raise ValueError("K must be at least 1")
        if not 0 < self.tau <= 1:
            raise ValueError("tau must be in (0, 1]")
        if self.temperature <= 0:
            raise ValueError("the temperature must be positive")
        if not 0 < self.min_probability <= 1:
            raise ValueError("the binomial rule's minimum probability must be in (0, 1]")

    def k_for(self, view: str, full_view: str = FULL_VIEW) -> int:
        """K for a view: ``k_full`` for the item's full view, ``k_strict`` for the others."""
        return self.k_full if view == full_view else self.k_strict

    def probe_parameters(self) -> dict[str, Any]:
        """What changes the raw probe output, hence the cache key; τ and the rule are applied afterwards."""
        if self.name == "sample":
            return {
                "k_strict": self.k_strict,
                "k_full": self.k_full,
                "temperature": self.temperature,
                "seed": self.seed,
            }
        return {}

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def seed_for(self, item_id: str, view: str) -> int:
        """A seed per (item, view), spaced by K so that the children seeds (seed + i) never overlap."""
        spacing = max(self.k_strict, self.k_full)
        item_slot = zlib.crc32(item_id.encode("utf-8")) % (1 << 24)
        return self.seed + (item_slot * len(PROBE_VIEWS) + PROBE_VIEWS.index(view)) * spacing


def min_count(k: int, tau: float) -> int:
    """⌈τK⌉ computed exactly (0.3 · 10 is 3, not 4), and at least one."""
    return max(1, math.ceil(Fraction(str(tau)) * k))


def binomial_tail(k: int, p: float, m: int) -> float:
    """P(Binomial(k, p) ≥ m)."""
    p = min(max(p, 0.0), 1.0)
    return sum(math.comb(k, j) * p**j * (1 - p) ** (k - j) for j in range(m, k + 1))


def probs_at_temperature(logprobs: Mapping[str, float], temperature: float) -> dict[str, float]:
    """p_T(i) ∝ exp(logprob_i / T): backends report log-probabilities before temperature."""
    finite = {k: v for k, v in logprobs.items() if v is not None and math.isfinite(v)}
    if not finite:
        return {k: 0.0 for k in logprobs}
    top = max(v / temperature for v in finite.values())
    weights = {k: (math.exp(v / temperature - top) if k in finite else 0.0) for k, v in logprobs.items()}
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


@dataclass
class ViewEstimate:
    """One view's consistent set, with the evidence it came from."""

    view: str
    consistent: list[str]
    k: int
    counts: dict[str, int] | None = None
    probs: dict[str, float] | None = None
    unparseable: int = 0
    audio_route: str = "hidden"
    by_probe: dict[str, dict[str, Any]] | None = None
    """Each probe's own estimate when this one is the union of several (TRIAD App. D.2)."""

    @property
    def modal(self) -> str | None:
        """The most chosen (or most probable) option; ties go to the earlier key; None without answers."""
        scores: Mapping[str, float] = self.counts if self.counts is not None else (self.probs or {})
        if not scores or max(scores.values()) <= 0:
            return None
        best = max(scores.values())
        return next(k for k, v in scores.items() if v == best)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"consistent": self.consistent, "k": self.k}
        if self.counts is not None:
            out["counts"] = self.counts
            out["unparseable"] = self.unparseable
        if self.probs is not None:
            out["probs"] = {k: round(v, 6) for k, v in self.probs.items()}
        out["audio_route"] = self.audio_route
        if self.by_probe is not None:
            out["by_probe"] = self.by_probe
        return out


def union_estimate(view: str, estimates: Mapping[str, ViewEstimate], option_keys: Sequence[str]) -> ViewEstimate:
    """One view's set from several probes: an option is consistent when *either* probe selects it (D.2).

    The counts add up when every probe sampled (K is then the total), probabilities are averaged when every
    probe gave them; each probe's own estimate is kept under ``by_probe``.
    """
    chosen = {key for estimate in estimates.values() for key in estimate.consistent}
    parts = list(estimates.values())
    counts = probs = None
    if all(e.counts is not None for e in parts):
        counts = {key: sum(e.counts.get(key, 0) for e in parts) for key in option_keys}  # type: ignore[union-attr]
    elif all(e.probs is not None for e in parts):
        probs = {key: sum(e.probs.get(key, 0.0) for e in parts) / len(parts) for key in option_keys}  # type: ignore[union-attr]
    routes = {e.audio_route for e in parts}
    return ViewEstimate(
        view,
        [key for key in option_keys if key in chosen],
        sum(e.k for e in parts),
        counts=counts,
        probs=probs,
        unparseable=sum(e.unparseable for e in parts),
        audio_route=routes.pop() if len(routes) == 1 else "mixed",
        by_probe={name: e.to_json() for name, e in estimates.items()},
    )


def estimate_from_samples(
    view: str, samples: Sequence[str], option_keys: Sequence[str], tau: float, audio_route: str = "hidden"
) -> ViewEstimate:
    """Counts of strictly parsed answers; unparseable answers count towards K but never as an option."""
    keys = tuple(option_keys)
    counts = dict.fromkeys(keys, 0)
    unparseable = 0
    for answer in samples:
        key = parse_answer(answer, keys)
        if key is None:
            unparseable += 1
        else:
            counts[key] += 1
    k = len(samples)
    needed = min_count(k, tau) if k else 1
    consistent = [key for key in keys if counts[key] >= needed]
    return ViewEstimate(view, consistent, k, counts=counts, unparseable=unparseable, audio_route=audio_route)


def estimate_from_probs(
    view: str,
    probs: Mapping[str, float],
    option_keys: Sequence[str],
    config: EstimatorConfig,
    audio_route: str = "hidden",
    full_view: str = FULL_VIEW,
) -> ViewEstimate:
    """Apply the configured rule to option probabilities (already at the sampling temperature)."""
    k = config.k_for(view, full_view)
    full = {key: float(probs.get(key, 0.0)) for key in option_keys}
    if config.rule == "threshold":
        consistent = [key for key, p in full.items() if p >= config.tau]
    else:
        needed = min_count(k, config.tau)
        consistent = [key for key, p in full.items() if binomial_tail(k, p, needed) >= config.min_probability]
    return ViewEstimate(view, consistent, k, probs=full, audio_route=audio_route)
