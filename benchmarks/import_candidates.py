"""Benchmark: `curate import candidates` (Omni-StoryBench story transitions) against reading and parsing the same
JSONL, the floor any import pays (issue 47's goal: <= 10x).

The candidates are screen_candidates.py's synthetic corpus (books of 8-14 pages, one JPEG per page, hard links
to a pool of drawn pictures). Per size, in one run: the floor (the file read and every line parsed by orjson,
best of 3), the import into a fresh SQLite workspace (best of ``REPEATS``, each into its own workspace), and
the import's steps timed apart on the same file (in CPU seconds), so that the ratio's parts are known: the shared JSONL reader's
checks and parse (``curation.jsonl``), validation into ``CandidateLine``, resolving the media paths, reading
each image's header against ``[media]`` limits, and storing the rows. The load average is printed with each
figure (the machine is shared), and the ratio in CPU seconds beside the wall clock's.

Run: python benchmarks/import_candidates.py [--sizes 10000 91449] [--scratch /dev/shm]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from screen_candidates import make_corpus  # noqa: E402

from curation.jsonl import parse_line, read_lines  # noqa: E402
from curation.screening.importer import CandidateImport, import_candidates, read_candidates  # noqa: E402
from curation.screening.schema import CandidateLine  # noqa: E402
from curation.workspace import Workspace  # noqa: E402

REPEATS = 3
GOAL_RATIO = 10.0
"""Issue 47: importing story candidates <= 10x reading and parsing their JSONL."""


def best_cpu(repeats: int, fn: Callable[[], object]) -> float:
    return min(timed(fn)[1] for _ in range(repeats))


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call (CPU: this process's, which the machine's other work inflates less)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def parse_floor(path: Path) -> int:
    """Read the file and parse every line: what any importer of it pays."""
    return sum(1 for line in path.read_bytes().split(b"\n") if line and orjson.loads(line))


def run(n: int, tmp: Path) -> dict:
    candidates, _, _ = make_corpus(tmp / f"corpus{n}", n)
    assert parse_floor(candidates) == n
    floors, imports = [], []
    for attempt in range(REPEATS):  # the floor is timed beside each import: the machine's speed drifts
        floors += [timed(lambda: parse_floor(candidates)) for _ in range(3)]
        ws = Workspace.init(tmp / f"ws{n}-{attempt}")
        reports: list[CandidateImport] = []
        imports.append(timed(lambda ws=ws, reports=reports: reports.append(import_candidates(ws, candidates))))
        assert reports[0].created == n
        settings = ws.settings
        ws.close()
        shutil.rmtree(tmp / f"ws{n}-{attempt}")
    objects = [orjson.loads(line) for line in candidates.read_bytes().split(b"\n") if line]
    steps = {
        "reader_s": best_cpu(3, lambda: [parse_line(raw, "f", k, orjson.loads) for k, raw in read_lines(candidates)]),
        "validate_s": best_cpu(3, lambda: [CandidateLine.model_validate(o) for o in objects]),
        "read_without_headers_s": best_cpu(3, lambda: read_candidates(candidates, None, settings.licences.accepted())),
        "read_with_headers_s": best_cpu(
            3, lambda: read_candidates(candidates, settings.media, settings.licences.accepted())
        ),
    }
    floor, import_s = min(w for w, _ in floors), min(w for w, _ in imports)
    return {
        "n": n,
        "floor_read_parse_s": floor,
        "import_s": import_s,
        "ratio": import_s / floor,
        "import_cpu_s": min(c for _, c in imports),
        "cpu_ratio": min(c for _, c in imports) / min(c for _, c in floors),
        **steps,
        "loadavg": list(os.getloadavg()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 91_449])
    parser.add_argument("--scratch", type=Path, default=None, help="folder for the corpus and workspaces")
    args = parser.parse_args()
    if args.scratch is not None:
        args.scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix="candidates-bench-") as tmp:
        results = [run(n, Path(tmp)) for n in args.sizes]
    for r in results:
        headers = r["read_with_headers_s"] - r["read_without_headers_s"]
        print(
            f"import of {r['n']} story candidates: {r['ratio']:.1f}x reading and parsing their JSONL "
            f"({r['import_s']:.2f} s vs {r['floor_read_parse_s']:.3f} s; in CPU seconds {r['cpu_ratio']:.1f}x; "
            f"goal <= {GOAL_RATIO:g}x; load average "
            "{:.2f} {:.2f} {:.2f})".format(*r["loadavg"])
        )
        print(
            f"  of it, in CPU seconds, timed apart (best of 3): the shared reader's checks and parse "
            f"{r['reader_s']:.2f} s, validation "
            f"{r['validate_s']:.2f} s, reading and checking every line without image headers "
            f"{r['read_without_headers_s']:.2f} s, image headers {headers:.2f} s, storing the rest "
            f"{r['import_cpu_s'] - r['read_with_headers_s']:.2f} s (of the import's {r['import_cpu_s']:.2f})"
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
