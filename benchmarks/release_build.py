"""Benchmark: `release build` over synthetic media against `sha256sum` over the same files (same run).

The media are random bytes written straight into the store with their asset rows (random bytes are not
valid media, so the media-conformity gate is left out; the store-integrity gate runs). Items get passing
review records through the normal import, so the build sees real admitted items. The goal is a build time of
at most 1.5x `sha256sum` (the I/O-and-hashing floor), with every file hashed exactly once.

    python benchmarks/release_build.py            # 0.25, 0.5 and 1 GB
    python benchmarks/release_build.py --gb 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.items import content_hash, item_content  # noqa: E402
from curation.reviews import import_reviews  # noqa: E402
from curation.tables import Asset, Item, SceneGroup  # noqa: E402
from curation.workspace import Workspace  # noqa: E402
from exports import writer as writer_module  # noqa: E402
from exports.build import build_release  # noqa: E402
from exports.gates import Gates, media_files_gate  # noqa: E402
from tests.exports.workspace_factory import REVIEWERS, admitting_reviews  # noqa: E402

REPEATS = 2
"""Builds per size, with sha256sum runs interleaved; the fastest of each counts (a shared machine is noisy). The
first build also pays for importing pyarrow, once per process; it is printed too."""
AUDIO_MB = 2.0
IMAGE_MB = 0.5


def populate(ws: Workspace, total_bytes: int, rng: np.random.Generator) -> list[Path]:
    """Groups of two sisters (own audio clip each, one shared image) until the media reach total_bytes."""
    for name, roles in {"ann1": ["author"], **{r: ["reviewer"] for r in REVIEWERS}}.items():
        ws.add_person(name, roles)
    per_group = int(2 * AUDIO_MB * 2**20 + IMAGE_MB * 2**20)
    groups = max(1, total_bytes // per_group)
    paths: list[Path] = []
    rows = []
    with ws.writing() as s:
        for g in range(groups):
            group = f"g{g:05d}"
            s.add(SceneGroup(id=group, perturbed="audio"))
            image = _store(ws, s, rng.bytes(int(IMAGE_MB * 2**20)), "image", ".jpg", paths)
            clips = [_store(ws, s, rng.bytes(int(AUDIO_MB * 2**20)), "audio", ".wav", paths) for _ in range(2)]
            s.flush()  # groups and assets before the items that reference them
            for (suffix, answer), audio in zip((("a", "A"), ("b", "B")), clips, strict=True):
                item = Item(
                    id=f"{group}-{suffix}",
                    group_id=group,
                    author="ann1",
                    language="en",
                    context=f"Sure, that was a really helpful suggestion about plan {g}.",
                    question="How does the speaker feel about the suggestion?",
                    options={"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"},
                    answer=answer,
                    taxonomy={"text": "pragmatic", "image": "semiotic", "audio": "prosodic"},
                    ambiguous=["text", "audio"],
                    image=image,
                    audio=audio,
                    provenance={
                        "image": {"source": "photo", "license": "CC0-1.0"},
                        "audio": {"source": "voice_acting", "license": "CC-BY-4.0"},
                    },
                    content_hash="",
                )
                item.content_hash = content_hash(item_content(item, "audio"))
                s.add(item)
                rows.append({"id": item.id, "group": group, "answer": answer})
    reviews = ws.root / "reviews.jsonl"
    reviews.write_text("".join(json.dumps(r) + "\n" for r in admitting_reviews(rows)))
    import_reviews(ws, reviews)
    return paths


def _store(ws: Workspace, session, data: bytes, kind: str, ext: str, paths: list[Path]) -> str:  # type: ignore[no-untyped-def]
    sha = hashlib.sha256(data).hexdigest()
    path = ws.media.path(sha, ext)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    session.add(
        Asset(
            sha256=sha,
            kind=kind,
            mime=f"{kind}/x-synthetic",
            ext=ext,
            size_bytes=len(data),
            provenance={"source": "photo" if kind == "image" else "voice_acting", "license": "CC0-1.0"},
        )
    )
    paths.append(path)
    return sha


def sha256sum_seconds(paths: list[Path]) -> float:
    start = time.perf_counter()
    for i in range(0, len(paths), 500):
        subprocess.run(["sha256sum", *map(str, paths[i : i + 500])], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(gigabytes: float, scratch: Path) -> dict[str, float]:
    rng = np.random.default_rng(7)
    ws = Workspace.init(scratch / "ws")
    try:
        t0 = time.perf_counter()
        paths = populate(ws, int(gigabytes * 2**30), rng)
        setup = time.perf_counter() - t0
        media_bytes = sum(p.stat().st_size for p in paths)
        sha256sum_seconds(paths)  # warm the page cache for both contenders
        floor = sha256sum_seconds(paths)

        copies = 0
        original = writer_module.copy_hashing

        def counting(source: Path, target: Path) -> tuple[str, int]:
            nonlocal copies
            copies += 1
            return original(source, target)

        writer_module.copy_hashing = counting
        builds = []
        try:
            for attempt in range(REPEATS):
                out = scratch / f"release-{attempt}"
                t0 = time.perf_counter()
                result = build_release(ws, "1.0.0", out=out, gates=Gates(item=(("media_files", media_files_gate),)))
                builds.append(time.perf_counter() - t0)
                shutil.rmtree(out)
                floor = min(floor, sha256sum_seconds(paths))
        finally:
            writer_module.copy_hashing = original
        build = min(builds)
        copies //= REPEATS
        assert copies == len(paths), f"{copies} hash passes over {len(paths)} media files"
        return {
            "gb": media_bytes / 2**30,
            "files": len(paths),
            "items": result.items,
            "setup_s": setup,
            "sha256sum_s": floor,
            "build_s": build,
            "first_build_s": builds[0],
            "ratio": build / floor,
        }
    finally:
        ws.close()
        shutil.rmtree(scratch / "ws", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, nargs="*", default=[0.25, 0.5, 1.0], help="media sizes to build")
    parser.add_argument("--scratch", type=Path, default=None, help="folder for the temporary workspaces")
    args = parser.parse_args()
    print(
        f"{'media GB':>8} {'files':>6} {'items':>6} {'sha256sum s':>11} {'build s':>8} {'ratio':>6} "
        f"{'1st build s':>11} {'1st ratio':>9}  (goal: ratio <= 1.5)"
    )
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix="release-bench-") as tmp:
        for gb in args.gb:
            r = measure(gb, Path(tmp))
            print(
                f"{r['gb']:8.2f} {r['files']:6d} {r['items']:6d} {r['sha256sum_s']:11.2f} {r['build_s']:8.2f} "
                f"{r['ratio']:6.2f} {r['first_build_s']:11.2f} {r['first_build_s'] / r['sha256sum_s']:9.2f}  "
                f"each media file hashed once; setup {r['setup_s']:.1f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
