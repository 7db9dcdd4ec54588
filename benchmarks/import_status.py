"""Benchmark: import N items with media, then `status --json`; and derive states with 7 records per item.

Reports items/s and how time grows from 1,000 to 10,000 items, against baselines measured in the same
run (hashing the same media files: the I/O floor of an import; a bare SELECT of the rows status reads).

Run: python benchmarks/import_status.py [--sizes 1000 10000] [--db URL-for-postgres-admin]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
from PIL import Image
from sqlalchemy import select

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.items import import_items  # noqa: E402
from curation.reviews import PendingReview, record_reviews  # noqa: E402
from curation.schema import REVIEW_MODELS  # noqa: E402
from curation.tables import Item  # noqa: E402
from curation.workflow import derive_status  # noqa: E402
from curation.workspace import Workspace  # noqa: E402

SETS = {
    "text": ["A", "B"],
    "image": ["A", "C"],
    "audio": ["A", "D"],
    "text+image": ["A", "B"],
    "text+audio": ["A", "C"],
    "image+audio": ["A", "D"],
    "text+image+audio": ["A"],
}


def make_dataset(folder: Path, n: int) -> Path:
    """n items in groups of 4 audio-perturbed sisters; one image per group, one clip per item."""
    media = folder / "media"
    media.mkdir(parents=True)
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        g = i // 4
        if i % 4 == 0:
            Image.fromarray(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)).save(media / f"g{g}.png")
        sf.write(media / f"i{i}.wav", (rng.standard_normal(8000) * 0.1).astype(np.float32), 16000, subtype="PCM_16")
        rows.append(
            {
                "id": f"item-{i:06d}",
                "group": f"group-{g:05d}",
                "perturbed": "audio",
                "language": "en",
                "author": "ann1",
                "context": f"Context of group {g}.",
                "image": f"media/g{g}.png",
                "audio": f"media/i{i}.wav",
                "question": "Which reading is meant?",
                "options": {"A": "first", "B": "second", "C": "third", "D": "fourth"},
                "answer": "ABCD"[i % 4],
                "taxonomy": {"text": "lexical", "image": "spatial", "audio": "prosodic"},
                "ambiguous": ["audio"],
                "provenance": {
                    "image": {"source": "photo", "license": "CC0-1.0"},
                    "audio": {"source": "voice_acting", "license": "CC0-1.0"},
                },
            }
        )
    path = folder / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def seven_records(item_id: str, answer: str) -> list[dict]:
    sets = {
        k: sorted({answer, *v} - ({"A"} if answer != "A" and k == "text+image+audio" else set()))
        for k, v in SETS.items()
    }
    sets["text+image+audio"] = [answer]
    rows = [{"item": item_id, "stage": "grammar", "reviewer": "rev1", "verdict": "pass"}]
    rows += [
        {
            "item": item_id,
            "stage": "audio_signoff",
            "reviewer": r,
            "scores": {"naturalness": 4, "clarity": 4, "artefacts": 4},
        }
        for r in ("rev2", "rev3")
    ]
    rows += [
        {"item": item_id, "stage": "subset_checklist", "reviewer": r, "consistent": sets}
        for r in ("rev1", "rev2", "rev3")
    ]
    rows.append({"item": item_id, "stage": "answer_check", "reviewer": "rev4", "answer": answer})
    return rows


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def run(n: int, tmp: Path, db_url: str | None) -> dict:
    data = make_dataset(tmp / f"data{n}", n)
    files = sorted((tmp / f"data{n}" / "media").iterdir())
    t_hash, _ = timed(lambda: [hashlib.sha256(f.read_bytes()).hexdigest() for f in files])
    ws = Workspace.init(tmp / f"ws{n}", db_url)
    ws.settings.review.grammar_quorum = 1  # the benchmark's seven records per item carry one grammar sign-off
    ws.add_person("ann1", ["author"])
    for r in ("rev1", "rev2", "rev3", "rev4"):
        ws.add_person(r, ["reviewer"])
    t_import, report = timed(lambda: import_items(ws, data))
    assert len(report.created) == n
    t_reimport, report = timed(lambda: import_items(ws, data))
    assert len(report.unchanged) == n
    t_select, _ = timed(lambda: ws.session().execute(select(Item.id, Item.options, Item.answer)).all())
    cli = [sys.executable, "-m", "omnicurate", "-w", str(ws.root), "status", "--json"]
    t_status_cli, out = timed(lambda: subprocess.run(cli, check=True, capture_output=True, text=True).stdout)
    assert len(json.loads(out)) == n
    rows = [r for i in range(n) for r in seven_records(f"item-{i:06d}", "ABCD"[i % 4])]
    pending = [PendingReview(k + 1, REVIEW_MODELS[r["stage"]].model_validate(r)) for k, r in enumerate(rows)]
    t_record, rep = timed(lambda: record_reviews(ws, pending))
    assert rep.recorded == 7 * n
    t_derive, statuses = timed(lambda: derive_status(ws))
    assert sum(s.stage == "group_integration" for s in statuses) == n
    ws.close()
    return {
        "n": n,
        "media_files": len(files),
        "hash_floor_s": t_hash,
        "import_s": t_import,
        "items_per_s": n / t_import,
        "reimport_s": t_reimport,
        "select_s": t_select,
        "status_cli_s": t_status_cli,
        "record_7n_s": t_record,
        "derive_7n_s": t_derive,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--db", help="PostgreSQL URL of a fresh database (default: SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = [run(n, Path(tmp), args.db) for n in args.sizes]
    print(
        f"{'n':>7} {'import s':>9} {'items/s':>8} {'vs hash':>8} {'reimport':>9} {'status CLI':>10} "
        f"{'record 7n':>10} {'derive 7n':>10}"
    )
    for r in results:
        print(
            f"{r['n']:>7} {r['import_s']:>9.2f} {r['items_per_s']:>8.0f} {r['import_s'] / r['hash_floor_s']:>7.1f}x "
            f"{r['reimport_s']:>9.2f} {r['status_cli_s']:>10.2f} {r['record_7n_s']:>10.2f} {r['derive_7n_s']:>10.3f}"
        )
    if len(results) > 1:
        a, b = results[0], results[-1]
        k = b["n"] / a["n"]
        for key in ("import_s", "status_cli_s", "record_7n_s", "derive_7n_s"):
            print(f"growth of {key} for {k:.0f}x items: {b[key] / a[key]:.1f}x")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
