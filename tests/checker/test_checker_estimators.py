from __future__ import annotations

import math

import pytest

from checker.estimators import (
    EstimatorConfig,
    binomial_tail,
    estimate_from_probs,
    estimate_from_samples,
    min_count,
    probs_at_temperature,
)
from checker.views import PROBE_VIEWS

KEYS = ("A", "B", "C", "D")


@pytest.mark.parametrize(
    ("k", "tau", "expected"),
    [
        (5, 0.2, 1),
        (10, 0.2, 2),
        (10, 0.3, 3),
        (5, 0.3, 2),
        (5, 0.4, 2),
        (5, 0.41, 3),
        (7, 0.2, 2),
        (3, 0.01, 1),
        (10, 1.0, 10),
    ],
)
def test_min_count_is_the_exact_ceiling(k: int, tau: float, expected: int) -> None:
    assert min_count(k, tau) == expected


def test_sample_consistency_boundary_at_ceil_tau_k() -> None:
    # K = 10, τ = 0.2: 2 of 10 is enough, 1 of 10 is not
    est = estimate_from_samples("text+image+audio", list("AAAAAAABBC"), KEYS, 0.2)
    assert est.consistent == ["A", "B"] and est.counts == {"A": 7, "B": 2, "C": 1, "D": 0}
    # K = 5, τ = 0.2: one of five counts (the reference's permissive default)
    assert estimate_from_samples("text", list("AAAAB"), KEYS, 0.2).consistent == ["A", "B"]
    # τ = 0.3, K = 10 needs 3 (not 4, as floating point 0.3·10 would give)
    assert estimate_from_samples("full", list("AAAAAAABBB"), KEYS, 0.3).consistent == ["A", "B"]
    assert estimate_from_samples("full", list("AAAAAAAABB"), KEYS, 0.3).consistent == ["A"]


def test_unparseable_samples_count_towards_k_but_never_as_an_option() -> None:
    est = estimate_from_samples("text", ["A", "maybe B?", "", "E", "A"], KEYS, 0.2)
    assert est.k == 5 and est.unparseable == 3 and est.counts == {"A": 2, "B": 0, "C": 0, "D": 0}
    assert est.consistent == ["A"]
    assert estimate_from_samples("text", ["no idea"] * 5, KEYS, 0.2).consistent == []
    assert estimate_from_samples("text", ["no idea"] * 5, KEYS, 0.2).modal is None


def test_binomial_tail_matches_closed_forms() -> None:
    assert binomial_tail(5, 0.2, 1) == pytest.approx(1 - 0.8**5)
    assert binomial_tail(10, 0.3, 2) == pytest.approx(1 - 0.7**10 - 10 * 0.3 * 0.7**9)
    assert binomial_tail(5, 0.0, 1) == 0.0 and binomial_tail(5, 1.0, 5) == pytest.approx(1.0)


def test_binomial_rule_boundary() -> None:
    config = EstimatorConfig(name="logprob")  # K = 5 strict: consistent when 1 - (1-p)^5 >= 0.5
    p_star = 1 - 0.5 ** (1 / 5)  # ≈ 0.1294
    above = estimate_from_probs("text", {"A": 1 - p_star - 1e-4, "B": p_star + 1e-4}, KEYS, config)
    below = estimate_from_probs("text", {"A": 1 - p_star + 1e-4, "B": p_star - 1e-4}, KEYS, config)
    assert above.consistent == ["A", "B"] and below.consistent == ["A"]
    # the full view uses K = 10 and needs 2 hits: p = 0.15 passes there? P(Bin(10,.15) >= 2) ≈ 0.456 → no
    assert estimate_from_probs("text+image+audio", {"A": 0.85, "B": 0.15}, KEYS, config).consistent == ["A"]
    assert estimate_from_probs("text+image+audio", {"A": 0.8, "B": 0.2}, KEYS, config).consistent == ["A", "B"]
    stricter = EstimatorConfig(name="logprob", min_probability=0.9)
    assert estimate_from_probs("text", {"A": 0.7, "B": 0.3}, KEYS, stricter).consistent == ["A"]


def test_threshold_rule_boundary_is_inclusive() -> None:
    config = EstimatorConfig(name="logprob", rule="threshold", tau=0.25)
    est = estimate_from_probs("text", {"A": 0.5, "B": 0.25, "C": 0.2499, "D": 0.0001}, KEYS, config)
    assert est.consistent == ["A", "B"]


def test_temperature_is_applied_to_logprobs() -> None:
    logprobs = {"A": math.log(0.6), "B": math.log(0.3), "C": math.log(0.1), "D": -math.inf}
    at_one = probs_at_temperature(logprobs, 1.0)
    assert at_one["A"] == pytest.approx(0.6) and at_one["D"] == 0.0
    sharp = probs_at_temperature(logprobs, 0.7)
    expected = {k: 0.6 ** (1 / 0.7) for k in "A"}["A"] / sum(p ** (1 / 0.7) for p in (0.6, 0.3, 0.1))
    assert sharp["A"] == pytest.approx(expected) and sharp["A"] > 0.6
    assert sum(sharp.values()) == pytest.approx(1.0)


def test_seeds_are_spaced_by_k_across_views_and_items() -> None:
    config = EstimatorConfig()
    seeds = sorted(config.seed_for(item, view) for item in ("a", "b", "c") for view in PROBE_VIEWS)
    assert all(later - earlier >= config.k_full for earlier, later in zip(seeds, seeds[1:], strict=False))
    assert config.seed_for("a", "text") == config.seed_for("a", "text")
    assert EstimatorConfig(seed=7).seed_for("a", "text") == config.seed_for("a", "text") + 7


def test_configuration_is_validated() -> None:
    for bad in ({"name": "vote"}, {"rule": "majority"}, {"tau": 0}, {"k_strict": 0}, {"temperature": 0}):
        with pytest.raises(ValueError):
            EstimatorConfig(**bad)  # type: ignore[arg-type]
    assert EstimatorConfig(name="logprob").probe_parameters() == {}
    assert EstimatorConfig(tau=0.4).probe_parameters() == EstimatorConfig().probe_parameters()


def test_audio_is_resampled_and_read_without_soundfile(media_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import sys

    import numpy as np

    from checker.media import load_audio

    at_16k = load_audio(media_dir / "sweep.wav", 16000)
    at_8k = load_audio(media_dir / "sweep.wav", 8000)
    assert at_16k.shape == (24000,) and at_8k.shape == (12000,) and at_8k.dtype == np.float32
    assert np.abs(at_8k).max() == pytest.approx(np.abs(at_16k).max(), rel=0.1)
    monkeypatch.setitem(sys.modules, "soundfile", None)  # import now fails: the wave fallback reads it
    assert np.allclose(load_audio(media_dir / "sweep.wav", 16000), at_16k, atol=1e-4)
