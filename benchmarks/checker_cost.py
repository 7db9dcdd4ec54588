"""Cost of the two estimators per item, on CPU with the tiny random Qwen2.5-Omni (no weights needed).

Prints model calls and generated tokens per item for ``sample`` (K = 5 per strict view, 10 for the full
view, each answer one constrained option key) and ``logprob`` (one constrained prefill per view), the ratio
of generated tokens (goal ≥ 5×), verdict agreement between the estimators and how time grows with the
number of items; then the reference recipe itself on one item (``sample`` with P0's free JSON answers,
one generate call per answer) as the baseline. Random weights never stop early, so the baseline's tokens
are an upper bound (``FREE_ANSWER_TOKENS`` per answer).

    python benchmarks/checker_cost.py [--items 4 8] [--smoke]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from demo_probe_items import demo_probe_items

from checker.backends.hf import TransformersBackend
from checker.estimators import EstimatorConfig
from checker.random_omni import build_random_omni
from checker.run import run_check
from checker.torch_compat import ensure_torchvision_importable
from checker.views import PROBE_VIEWS

REFERENCE_PAIR_AND_FULL_SAMPLES = 3 * 5 + 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[4, 8], help="item counts to measure growth")
    parser.add_argument(
        "--smoke", action="store_true", help="one item, no reference-recipe baseline (minutes on CPU): a CI smoke run"
    )
    args = parser.parse_args()
    if args.smoke:
        args.items = [1]
    ensure_torchvision_importable()
    with tempfile.TemporaryDirectory() as scratch:
        model = build_random_omni(Path(scratch) / "tiny")
        backend = TransformersBackend(str(model), device="cpu")
        print(f"{'items':>5} {'estimator':>9} {'calls/item':>10} {'tokens/item':>11} {'items/s':>8} {'s':>6}")
        for n in args.items:
            items = demo_probe_items(n)
            runs = {}
            for name in ("sample", "logprob"):
                started = time.perf_counter()
                results, stats = run_check(items, backend, EstimatorConfig(name=name))  # type: ignore[arg-type]
                seconds = time.perf_counter() - started
                runs[name] = (results, stats)
                print(
                    f"{n:>5} {name:>9} {stats.model_calls / n:>10.1f} {stats.generated_tokens / n:>11.1f} "
                    f"{n / seconds:>8.2f} {seconds:>6.1f}"
                )
            sample, logprob = runs["sample"], runs["logprob"]
            ratio = sample[1].generated_tokens / logprob[1].generated_tokens
            agree = sum(a.verdict == b.verdict for a, b in zip(sample[0], logprob[0], strict=True)) / n
            print(
                f"      generated tokens sample/logprob = {ratio:.2f}x (goal >= 5x: "
                f"{'met' if ratio >= 5 else 'NOT met'}); verdict agreement {agree:.0%}"
            )
        if args.smoke:
            print("reference recipe: not run (--smoke)")
            return
        items = demo_probe_items(1)
        started = time.perf_counter()
        _, stats = run_check(items, backend, EstimatorConfig(name="sample"), answer_format="json")
        seconds = time.perf_counter() - started
        print(
            f"reference recipe (free JSON answers, 1 item): {stats.model_calls} calls, {stats.generated_tokens} "
            f"generated tokens ({REFERENCE_PAIR_AND_FULL_SAMPLES} of the calls for the pair and full views alone), "
            f"{seconds:.1f} s; logprob needs {len(PROBE_VIEWS)} prefills and {len(PROBE_VIEWS)} tokens"
        )


if __name__ == "__main__":
    main()
