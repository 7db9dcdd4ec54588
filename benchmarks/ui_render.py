"""Render time of the annotation UI's queue and dashboard pages with 100 and 10,000 items.

Items are bulk-inserted straight into a fresh SQLite workspace (the import path's validation and media
decoding are not what is measured). Each page is rendered through ``streamlit.testing.v1.AppTest``:
after a warm-up, as a reviewer paging through a queue sees it (the derived state is cached until the
workspace changes). The goal is at most 2x growth of that render from 100 to 10,000 items. The cold
cost, deriving every item's state once after a change, is printed too: it grows with n by nature.

Run: python benchmarks/ui_render.py [--sizes 100 10000] [--repeats 5] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "annotation_ui" / "app.py"
OPTIONS = {"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"}


def build(root: Path, n: int):  # type: ignore[no-untyped-def]
    from curation.tables import Asset, Item, SceneGroup
    from curation.workspace import Workspace

    ws = Workspace.init(root)
    ws.add_person("ann1", ["author"])
    ws.add_person("rev1", ["reviewer"])
    ws.add_person("maya", ["maintainer", "reviewer"])
    image, audio = "1" * 64, "2" * 64
    provenance = {
        "image": {"source": "photo", "license": "CC0-1.0"},
        "audio": {"source": "voice_acting", "license": "CC0-1.0"},
    }
    with ws.writing() as s:
        s.execute(
            insert(Asset),
            [
                {"sha256": image, "kind": "image", "mime": "image/jpeg", "ext": ".jpg", "size_bytes": 1},
                {"sha256": audio, "kind": "audio", "mime": "audio/wav", "ext": ".wav", "size_bytes": 1},
            ],
        )
        s.execute(insert(SceneGroup), [{"id": f"g{g:05d}", "perturbed": "audio"} for g in range(n // 2)])
        s.execute(
            insert(Item),
            [
                {
                    "id": f"g{i // 2:05d}-{'ab'[i % 2]}",
                    "group_id": f"g{i // 2:05d}",
                    "author": "ann1",
                    "language": "en",
                    "context": f"Sure, that was a really helpful suggestion number {i // 2}.",
                    "question": "How does the speaker feel about the suggestion?",
                    "options": OPTIONS,
                    "answer": "AB"[i % 2],
                    "taxonomy": {"text": "pragmatic", "image": "semiotic", "audio": ["prosodic", "indexical"][i % 2]},
                    "ambiguous": ["text", "audio"],
                    "image": image,
                    "audio": audio,
                    "provenance": provenance,
                    "content_hash": f"{i:064x}",
                }
                for i in range(n)
            ],
        )
    return ws


def render(page: str, user, repeats: int) -> float:  # type: ignore[no-untyped-def]
    """Median seconds of rendering PAGE for USER once the derived state is cached (after one warm-up)."""
    from streamlit.testing.v1 import AppTest

    from annotation_ui.components import USER_KEY

    def once() -> float:
        at = AppTest.from_file(str(APP), default_timeout=600)
        at.session_state[USER_KEY] = user
        at.run()
        start = time.perf_counter()
        at.switch_page(f"pages/{page}.py").run()
        elapsed = time.perf_counter() - start
        assert not at.exception, at.exception
        return elapsed

    once()
    return statistics.median(once() for _ in range(repeats))


def derive(ws) -> float:  # type: ignore[no-untyped-def]
    """Seconds to derive the snapshot and the dashboard's figures from scratch (the first render's cost)."""
    from annotation_ui.dashboard import dashboard_data
    from annotation_ui.snapshot import load_snapshot

    start = time.perf_counter()
    dashboard_data(load_snapshot(ws))
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[100, 10_000], metavar=("SMALL", "LARGE"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--smoke", action="store_true", help="10 and 20 items, one repeat, growth not judged: a CI smoke run"
    )
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.repeats = [10, 20], 1
    sys.path.insert(0, str(ROOT))
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from annotation_ui.logic import SignedIn

    results: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory(prefix="ui-bench-") as tmp:
        for n in args.sizes:
            start = time.perf_counter()
            ws = build(Path(tmp) / f"ws{n}", n)
            print(f"n={n:>6}: workspace built in {time.perf_counter() - start:.2f} s", file=sys.stderr)
            os.environ["CURATE_WORKSPACE"] = str(ws.root)
            results[("derive (cold)", n)] = derive(ws)
            results[("grammar queue", n)] = render("grammar", SignedIn("rev1", frozenset({"reviewer"})), args.repeats)
            results[("dashboard", n)] = render(
                "dashboard", SignedIn("maya", frozenset({"maintainer", "reviewer"})), args.repeats
            )
            ws.close()
    small, large = args.sizes
    print(f"{'what':<15} {'n':>7} {'seconds':>9}")
    for (what, n), seconds in results.items():
        print(f"{what:<15} {n:>7} {seconds:>9.4f}")
    ok = True
    for what in ("grammar queue", "dashboard", "derive (cold)"):
        growth = results[(what, large)] / results[(what, small)]
        if what == "derive (cold)":
            print(f"{what}: grows {growth:.1f}x (linear in n by nature; done once per change of the workspace)")
            continue
        ok &= growth <= 2.0
        verdict = "ok" if growth <= 2.0 else "OVER GOAL"
        print(f"{what}: warm render grows {growth:.2f}x from n={small} to n={large} (goal <= 2x: {verdict})")
    return 0 if ok or args.smoke else 1  # too few items for a growth figure to mean anything


if __name__ == "__main__":
    raise SystemExit(main())
