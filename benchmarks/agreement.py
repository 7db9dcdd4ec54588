"""Benchmark: Krippendorff's alpha and its bootstrap on 10,000 units x 24 coders.

Compares, in the same run, the vectorised bootstrap of curation.agreement (per-unit sums computed once,
resamples as draw-count weights) with two baselines: the ``krippendorff`` package called once per
resample on the resampled units, and a pure-Python coincidence-matrix loop over pairs of coders.
Reports growth with the number of units. Run: ``python benchmarks/agreement.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from itertools import permutations
from pathlib import Path

import numpy as np

from curation.agreement import krippendorff_alpha, read_ratings
from curation.agreement.ratings import MISSING, Ratings


def synthetic_ratings(units: int, coders: int, seed: int = 0, missing: float = 0.2) -> Ratings:
    """Ordinal 1..5 ratings: a true level per unit, coders off by one now and then, some absent."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, size=units)
    noise = rng.choice([-1, 0, 0, 0, 1], size=(units, coders))
    matrix = np.clip(truth[:, None] + noise, 0, 4)
    matrix[rng.random((units, coders)) < missing] = MISSING
    return Ratings(
        units=tuple(f"u{i}" for i in range(units)),
        coders=tuple(f"c{j}" for j in range(coders)),
        values=(1.0, 2.0, 3.0, 4.0, 5.0),
        matrix=matrix,
    )


def timed(fn, repeat: int = 1) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    """Best wall time of ``repeat`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def package_per_resample(ratings: Ratings, level: str, resamples: int, seed: int) -> np.ndarray:
    """Baseline: the naive bootstrap, resampling units of the coder x unit table and calling the package."""
    import krippendorff

    table = np.where(ratings.matrix == MISSING, np.nan, np.asarray(ratings.values)[ratings.matrix]).T
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    for b in range(resamples):
        drawn = table[:, rng.integers(0, table.shape[1], size=table.shape[1])]
        out[b] = krippendorff.alpha(reliability_data=drawn, level_of_measurement=level)
    return out


def python_loop_alpha(ratings: Ratings) -> float:
    """Baseline: nominal alpha by the textbook loop over units and ordered pairs of coders."""
    n_values = len(ratings.values)
    coincidences = [[0.0] * n_values for _ in range(n_values)]
    for row in ratings.matrix.tolist():
        present = [v for v in row if v != MISSING]
        if len(present) < 2:
            continue
        for i, j in permutations(range(len(present)), 2):
            coincidences[present[i]][present[j]] += 1.0 / (len(present) - 1)
    totals = [sum(r) for r in coincidences]
    n = sum(totals)
    observed = sum(coincidences[c][k] for c in range(n_values) for k in range(n_values) if c != k)
    expected = sum(totals[c] * totals[k] for c in range(n_values) for k in range(n_values) if c != k)
    return 1.0 - (n - 1) * observed / expected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()
    units, coders, resamples = (2_000, 24, 200) if args.quick else (10_000, 24, 1_000)
    naive_resamples = 5 if args.quick else 20

    ratings = synthetic_ratings(units, coders)
    print(f"# {units} units x {coders} coders, {ratings.n_ratings} ratings; {resamples} bootstrap resamples")
    print("# naive = krippendorff.alpha on the resampled coder x unit table, per resample (extrapolated)")
    header = f"{'level':<9} {'alpha':>6} {'point s':>8} {'bootstrap s':>12} {'naive s':>8} {'speed-up':>9}"
    print(f"{header}  interval")
    for level in ("nominal", "ordinal", "interval", "ratio"):
        point_s, estimate = timed(lambda lv=level: krippendorff_alpha(ratings, lv), repeat=2)
        boot_s, with_ci = timed(lambda lv=level: krippendorff_alpha(ratings, lv, bootstrap=resamples, seed=1))
        naive_s, _ = timed(lambda lv=level: package_per_resample(ratings, lv, naive_resamples, 1))
        naive_total = naive_s / naive_resamples * resamples
        ci = with_ci.interval
        print(
            f"{level:<9} {estimate.value:6.3f} {point_s:8.3f} {boot_s:12.3f} {naive_total:8.1f} "
            f"{naive_total / boot_s:8.0f}x  [{ci.low:.3f}, {ci.high:.3f}]"
        )

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ratings.csv"
        rows, cols = np.nonzero(ratings.matrix != MISSING)
        values = np.asarray(ratings.values)[ratings.matrix[rows, cols]]
        path.write_text(
            "unit,coder,value\n" + "".join(f"u{u},c{c},{v:g}\n" for u, c, v in zip(rows, cols, values, strict=True))
        )
        read_s, read = timed(lambda: read_ratings(path))
        assert read.n_ratings == ratings.n_ratings
    print(f"\n# reading the {ratings.n_ratings} ratings from CSV (long form): {read_s:.2f} s")

    small = synthetic_ratings(500 if args.quick else 2_000, coders, seed=2)
    loop_s, loop_value = timed(lambda: python_loop_alpha(small))
    ours_s, ours = timed(lambda: krippendorff_alpha(small, "nominal"), repeat=3)
    assert abs(loop_value - ours.value) < 1e-9, (loop_value, ours.value)
    print(
        f"\n# nominal alpha on {len(small.units)} x {coders}: pure-Python pair loop {loop_s:.3f} s, "
        f"vectorised {ours_s:.4f} s ({loop_s / ours_s:.0f}x), same value {ours.value:.6f}"
    )

    print(f"\n# growth with n (ordinal, {coders} coders, {resamples} resamples)")
    print(f"{'units':>7} {'bootstrap s':>12} {'s per 1k units':>15} {'naive s':>9} {'speed-up':>9}")
    for n in [500, 1_000, 2_000] if args.quick else [1_250, 2_500, 5_000, 10_000, 20_000]:
        data = synthetic_ratings(n, coders, seed=3)
        boot_s, _ = timed(lambda d=data: krippendorff_alpha(d, "ordinal", bootstrap=resamples, seed=0), repeat=3)
        naive_s, _ = timed(lambda d=data: package_per_resample(d, "ordinal", naive_resamples, 0))
        naive_total = naive_s / naive_resamples * resamples
        print(f"{n:7d} {boot_s:12.3f} {boot_s / n * 1000:15.4f} {naive_total:9.2f} {naive_total / boot_s:8.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
