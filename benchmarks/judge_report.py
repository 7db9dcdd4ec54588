"""The judge_task kind at scale: the score page's time to the next sample, and the judge-vs-human report.

1. Time to the next sample, from 100 to 10,000 score samples (goal: flat, at most 2x). The annotator has
   applied every sample before the middle of the queue, so a queue that scanned from the start would grow
   with n; the serving query walks the sample index from the person's cursor. Measured twice: the domain
   call (``sample_store.next_sample``) and the whole score page rendered through AppTest (warm).
2. The report (``output_store.report``: load, aggregate, metrics per judge x criterion x modality pair, paired
   bootstrap, human alpha) on S score samples x 3 annotators x 4 judges, S from 750 to 6,000 (goal: linear,
   time per sample at the largest size at most 1.5x the smallest, the baseline of the same run).

Rows are bulk-inserted into fresh SQLite workspaces (the import path is not what is measured). Times are
CPU seconds of this process (``time.process_time``), measured in turns across sizes: the machine's CPUs are
shared, and wall-clock times there swing with other people's load.

Run: python benchmarks/judge_report.py [--smoke] [--bootstrap 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sqlalchemy import insert

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "annotation_ui" / "app.py"
PAIRS = ("text->text", "text+image->text", "text+video->text", "text->image", "text->audio", "text->video")


def build(root: Path, n_samples: int, annotators: int = 3, judges: int = 4, applied_by_ann1: int = 0):  # type: ignore[no-untyped-def]
    """A workspace with n score samples (4 systems per task), annotations and judge outputs."""
    from curation.kinds.judge.rubrics import CRITERIA
    from curation.kinds.judge.tables import (
        JudgeAnnotation,
        JudgeCursor,
        JudgeOutput,
        JudgeResponse,
        JudgeSample,
        JudgeTask,
    )
    from curation.workspace import Workspace

    ws = Workspace.init(root)
    people = [f"ann{k + 1}" for k in range(max(annotators, 1))]
    for name in people:
        ws.add_person(name, ["reviewer"])
    rng = np.random.default_rng(0)
    n_tasks = -(-n_samples // 4)
    tasks = [
        {
            "id": f"t{t:05d}",
            "instruction": f"Task number {t}.",
            "inputs": {},
            "output": "text",
            "modality_pair": PAIRS[t % len(PAIRS)],
            "source": "bench",
            "license": "CC0-1.0",
            "content_hash": f"{t:064x}",
            "created_by": "bench",
        }
        for t in range(n_tasks)
    ]
    responses, samples = [], []
    for i in range(n_samples):
        task, system = f"t{i // 4:05d}", f"sys-{i % 4}"
        rid = f"{task}:{system}"
        responses.append(
            {
                "id": rid,
                "task": task,
                "system": system,
                "modality": "text",
                "text": f"answer {i}",
                "content_hash": f"{i:064x}",
            }
        )
        payload = {
            "id": f"s:{rid}",
            "task": task,
            "response": rid,
            "system": system,
            "modality_pair": PAIRS[(i // 4) % len(PAIRS)],
        }
        samples.append(
            {"id": f"s:{rid}", "kind": "score", "position": i, "task": task, "payload": payload, "applied": 0}
        )
    quality = rng.uniform(1, 5, n_samples)
    annotations, outputs = [], []
    for person in people[:annotators]:
        scores = np.clip(np.rint(quality[:, None] + rng.normal(0, 0.6, (n_samples, len(CRITERIA)))), 1, 5).astype(int)
        for i in range(n_samples):
            annotations.append({"sample": samples[i]["id"], "annotator": person, "applied": True,
                                "payload": {"scores": dict(zip(CRITERIA, scores[i].tolist(), strict=True))}})  # fmt: skip
        for i in range(n_samples):
            samples[i]["applied"] += 1
    for j in range(judges):
        draws = np.clip(
            np.rint(quality[:, None, None] + rng.normal(0, 0.8 + 0.2 * j, (n_samples, len(CRITERIA), 3))), 1, 5
        ).astype(int)
        for i in range(n_samples):
            outputs.append({"sample": samples[i]["id"], "judge": f"judge-{j + 1}",
                            "payload": {"scores": {c: draws[i, k].tolist() for k, c in enumerate(CRITERIA)}}})  # fmt: skip
    if applied_by_ann1:
        for i in range(applied_by_ann1):
            annotations.append(
                {
                    "sample": samples[i]["id"],
                    "annotator": "ann1",
                    "applied": True,
                    "payload": {"scores": dict.fromkeys(CRITERIA, 3)},
                }
            )
            samples[i]["applied"] += 1
    with ws.writing() as s:
        s.execute(insert(JudgeTask), tasks)
        s.execute(insert(JudgeResponse), responses)
        s.execute(insert(JudgeSample), samples)
        if annotations:
            s.execute(insert(JudgeAnnotation), annotations)
        if outputs:
            s.execute(insert(JudgeOutput), outputs)
        if applied_by_ann1:
            s.execute(insert(JudgeCursor), [{"person": "ann1", "kind": "score", "position": applied_by_ann1 - 1}])
    return ws


def median_time(fn, repeats: int) -> float:  # type: ignore[no-untyped-def]
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def page_render(root: Path) -> float:
    """Seconds to render the score page for ann1 in a fresh session (it serves the next sample); the app's
    own start (sign-in state, navigation) is outside the timing."""
    from streamlit.testing.v1 import AppTest

    from annotation_ui.components import USER_KEY
    from annotation_ui.logic import SignedIn

    os.environ["CURATE_WORKSPACE"] = str(root)
    at = AppTest.from_file(str(APP), default_timeout=600)
    at.session_state[USER_KEY] = SignedIn("ann1", frozenset({"reviewer"}))
    at.run()
    start = time.process_time()
    at.switch_page("pages/judge_score.py").run()
    elapsed = time.process_time() - start
    assert not at.exception, at.exception
    return elapsed


def interleaved(measure, keys, rounds: int) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """Median of ``measure(key)`` per key, the keys taking turns each round so that a machine whose load
    drifts (shared CPUs) weighs on every size alike."""
    for key in keys:
        measure(key)  # warm-up
    times: dict = {key: [] for key in keys}  # type: ignore[type-arg]
    for _ in range(rounds):
        for key in keys:
            times[key].append(measure(key))
    return {key: statistics.median(values) for key, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the smallest sizes only, once: does it run?")
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from curation.kinds.judge import output_store, sample_store
    from curation.kinds.judge.report import ReportSettings

    page_sizes = (100, 300) if args.smoke else (100, 10_000)
    report_sizes = (150, 300) if args.smoke else (750, 1500, 3000, 6000)
    repeats = 1 if args.smoke else args.repeats
    ok = True
    with tempfile.TemporaryDirectory(prefix="judge-bench-") as tmp:
        spaces = {}
        for n in page_sizes:
            ws = build(Path(tmp) / f"serve{n}", n, annotators=0, judges=0, applied_by_ann1=n // 2)
            assert sample_store.next_sample(ws, "ann1", "score").position == n // 2
            spaces[n] = ws

        def serve(n: int) -> float:
            start = time.process_time()
            for _ in range(20):
                sample_store.next_sample(spaces[n], "ann1", "score")
            return (time.process_time() - start) / 20

        domain = interleaved(serve, page_sizes, max(repeats, 3) * 3)
        page = interleaved(lambda n: page_render(spaces[n].root), page_sizes, max(repeats, 1))
        for ws in spaces.values():
            ws.close()
        print(f"{'samples':>8} {'next_sample ms':>15} {'score page ms':>14}")
        for n in page_sizes:
            print(f"{n:>8} {domain[n] * 1e3:>15.2f} {page[n] * 1e3:>14.1f}")
        small, large = page_sizes
        for label, figures in (("next_sample", domain), ("score page", page)):
            growth = figures[large] / figures[small]
            verdict = "ok" if growth <= 2.0 else "OVER GOAL"
            ok &= growth <= 2.0
            print(f"{label}: {growth:.2f}x from {small} to {large} samples (goal <= 2x, baseline n={small}: {verdict})")

        settings = ReportSettings(bootstrap=args.bootstrap)
        reports = {n: build(Path(tmp) / f"report{n}", n) for n in report_sizes}

        def timed_report(n: int) -> float:
            start = time.process_time()
            output_store.report(reports[n], settings)
            return time.process_time() - start

        timings = interleaved(timed_report, report_sizes, 1 if args.smoke else 3)
        for ws in reports.values():
            ws.close()
        base = report_sizes[0]
        print(
            f"\n{'score samples':>13} {'CPU s':>9} {'us/sample':>10} {'vs baseline':>12}   (3 annotators, 4 judges, {args.bootstrap} resamples)"
        )
        for n, seconds in timings.items():
            ratio = (seconds / n) / (timings[base] / base)
            print(f"{n:>13} {seconds:>9.3f} {seconds / n * 1e6:>10.1f} {ratio:>11.2f}x")
        per_sample = (timings[report_sizes[-1]] / report_sizes[-1]) / (timings[base] / base)
        verdict = "ok" if per_sample <= 1.5 else "OVER GOAL"
        ok &= per_sample <= 1.5
        print(
            f"report: time per sample at n={report_sizes[-1]} is {per_sample:.2f}x that at n={base} (goal <= 1.5x, linear: {verdict})"
        )
    return 0 if ok or args.smoke else 1


if __name__ == "__main__":
    raise SystemExit(main())
