"""Benchmark: import N items with media, then `status --json`; then 7 review records per item, and derive
states and `status --json` again with the records present.

Reports items/s and how time grows from 1,000 to 10,000 items, against floors measured in the same run:
hashing the same files (the I/O floor of an import) with both `sha256sum` and OpenSSL (`hashlib`, the faster,
honest floor, see hash_floor.py), and a raw SELECT of the rows the derivation reads. Issue 27's goals: import
at 10k <= 20x the hash floor, growth 1k->10k <= 10.5x; derive at 10k x 7 records <= 6x the SELECT; status
--json at 10k with records <= 1.5 s and <= 2x its 1k time. The load average is printed with the figures, and
the CPU seconds of the SELECT, the derivation and status (what a shared machine's load does not inflate as much).
An import this large reads its media in worker processes and leaves measuring their facts and audit signatures
to the step `curate import items` starts in the background (curation.audit.measuring); that step is timed on
its own right after the import and printed beside it, and the two together against issue 47's floor, measured
in the same run: copying, hashing and decoding each medium once (goal <= 3x), in wall seconds and in CPU seconds
(worker processes included: on a shared machine the CPU figure moves less with the others' load). Each item's
clip lasts ``CLIP_SECONDS`` (5 s, as TRIAD's questions' audio; runs before issue 47's second round used 0.5 s clips,
too short for chromaprint, so their measuring step skipped it and its figures are not comparable). At the end,
`status --json` with records is timed again on every size's workspace, the sizes alternating (SQLite), so that its
growth compares two times taken under the same conditions (``status_cli_7n_side_by_side_s`` in the JSON line). `status` keeps each group's statuses
between runs (curation.status_memo); "status 7n" is timed as a reviewer's day sees it, each run after one more
review (that group derived again, the others read from what the last run kept), and also with nothing kept
(``status_cli_7n_cold_s``: the first status after the 70,000 records, a full derivation).

Run: python benchmarks/import_status.py [--sizes 1000 10000] [--db URL-for-postgres-admin] [--scratch /dev/shm]
(--scratch: where the files and workspaces go; on a virtual machine whose disk's speed varies from one minute to
the next, a folder in memory times the work itself)
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import soundfile as sf
from PIL import Image
from sqlalchemy import String, select, type_coerce
from sqlmodel import col

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hash_floor import compile_sources, host_memory, host_memory_note, openssl_seconds, sha256sum_seconds  # noqa: E402

from curation.audit.measuring import measure_pending  # noqa: E402
from curation.items import ImportReport, import_items  # noqa: E402
from curation.reviews import PendingReview, record_reviews  # noqa: E402
from curation.schema import REVIEW_MODELS, GroupReview  # noqa: E402
from curation.status_memo import MEMO_PATH  # noqa: E402
from curation.tables import Item, ReviewRecord  # noqa: E402
from curation.workflow import derive_status  # noqa: E402
from curation.workspace import CONFIG_NAME, Workspace  # noqa: E402
from devsupport.reviews import PASSING_EXCLUSIONS  # noqa: E402

REPEATS = 5
"""The SELECT and the derivation with records are the best of this many runs: on a shared 2-core machine a
single 10k-row SELECT varied 3x between runs, and their ratio with it."""
IMPORT_REPEATS = 3
"""Imports per size, each into a fresh workspace (SQLite), the fastest counting: on the development machine
creating a small file cost 0.1 ms or 0.9 ms from one minute to the next, and an import creates one per
medium. The measuring step, the re-import and everything after run on the last workspace."""
CLI_REPEATS = 3
"""`curate status --json` with records (a new process each) is the best of this many runs."""
CLI_HELP = [sys.executable, "-m", "omnicurate", "--help"]
ITEM_COLUMNS = (
    col(Item.id),
    col(Item.group_id),
    col(Item.author),
    col(Item.revision),
    col(Item.context),
    col(Item.question),
    col(Item.options),
    col(Item.answer),
    col(Item.image),
    col(Item.audio),
    col(Item.provenance),
    col(Item.content_hash),
    col(Item.kind),
    col(Item.modalities),
    col(Item.extra),
)
"""The item columns ``curation.fact_loading.load_facts`` reads (in the same SELECT)."""
RECORD_COLUMNS = (
    col(ReviewRecord.subject),
    col(ReviewRecord.stage),
    col(ReviewRecord.reviewer),
    col(ReviewRecord.revision),
    col(ReviewRecord.inputs_hash),
    type_coerce(col(ReviewRecord.payload), String),  # raw JSON text, as load_records reads it
    col(ReviewRecord.id),
)
"""The review-record columns ``curation.fact_loading.load_records`` reads."""

CLIP_SECONDS = 5.0
"""Each item's clip: as long as TRIAD's questions' audio (5-10 s), and over chromaprint's 3 s minimum, so that
the measuring step fingerprints every clip as it would a real one (the 0.5 s clips of earlier runs skipped it)."""
CLIP_RATE = 16000

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
        clip = rng.standard_normal(int(CLIP_SECONDS * CLIP_RATE)) * 0.1
        sf.write(media / f"i{i}.wav", clip.astype(np.float32), CLIP_RATE, subtype="PCM_16")
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
        {
            "item": item_id,
            "stage": "subset_checklist",
            "reviewer": r,
            "consistent": sets,
            "exclusions": PASSING_EXCLUSIONS,
        }
        for r in ("rev1", "rev2", "rev3")
    ]
    rows.append({"item": item_id, "stage": "answer_check", "reviewer": "rev4", "answer": answer})
    return rows


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def best_of(repeats: int, fn):  # type: ignore[no-untyped-def]
    """The fastest of ``repeats`` timed calls (a shared machine is noisy), with the last call's result."""
    runs = [timed(fn) for _ in range(repeats)]
    return min(t for t, _ in runs), runs[-1][1]


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its finished children: on a shared machine the wall
    clock also counts other people's work, the CPU time counts only this run's."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best_cpu_of(repeats: int, fn, before=None):  # type: ignore[no-untyped-def]
    """Like ``best_of``, with the fewest CPU seconds of the runs too: (wall, cpu, last result). ``before``: run
    untimed before each timed call."""
    runs = []
    for _ in range(repeats):
        if before is not None:
            before()
        cpu = cpu_seconds()
        wall, result = timed(fn)
        runs.append((wall, cpu_seconds() - cpu, result))
    return min(r[0] for r in runs), min(r[1] for r in runs), runs[-1][2]


def raw_select(ws: Workspace) -> int:
    """The rows and columns the status derivation reads (items and review records), as plain tuples: the
    database floor of deriving states."""
    with ws.session() as s:
        items = s.execute(select(*ITEM_COLUMNS).order_by(col(Item.id))).all()
        records = s.execute(select(*RECORD_COLUMNS)).all()
    return len(items) + len(records)


def forget_statuses(ws: Workspace) -> None:
    """Remove the statuses `curate status` kept (curation.status_memo), so that the next one derives every
    group: the first status after a large import or review."""
    (ws.root / MEMO_PATH).unlink(missing_ok=True)


def one_more_review(ws: Workspace, k: int, reviewer: str = "rev5") -> None:
    """A group reviewer passes group k: one new record, so the next `curate status` derives that group again
    and takes the others' statuses from what the last one kept (as during a day of reviewing)."""
    review = GroupReview(group=f"group-{k:05d}", stage="group_integration", reviewer=reviewer, verdict="pass")
    assert record_reviews(ws, [PendingReview(1, review)]).recorded == 1


def decode_floor_seconds(media: list[Path], target: Path) -> tuple[float, float]:
    """Wall and CPU seconds of the least an import with facts must do (issue 47's floor): copy each medium into
    a folder, hash it with OpenSSL and decode it once (Pillow's full decode of an image, soundfile's of a clip)."""
    target.mkdir()
    cpu = cpu_seconds()
    start = time.perf_counter()
    for path in media:
        copied = target / path.name
        shutil.copyfile(path, copied)
        data = copied.read_bytes()
        hashlib.sha256(data).hexdigest()
        if path.suffix == ".wav":
            sf.read(io.BytesIO(data))
        else:
            with Image.open(io.BytesIO(data)) as im:
                im.load()
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    shutil.rmtree(target)
    return seconds, cpu


def fresh_workspace(root: Path, db_url: str | None) -> Workspace:
    ws = Workspace.init(root, db_url)
    ws.settings.review.grammar_quorum = 1  # the benchmark's seven records per item carry one grammar sign-off
    ws.settings.save(ws.root / CONFIG_NAME)  # and `curate status` in its own process reads the same setting
    ws.add_person("ann1", ["author"])
    for r in ("rev1", "rev2", "rev3", "rev4", "rev5", "rev6"):  # rev5 and rev6 review groups
        ws.add_person(r, ["reviewer"])
    return ws


def run(n: int, tmp: Path, db_url: str | None) -> dict:
    data = make_dataset(tmp / f"data{n}", n)
    files = [*sorted((tmp / f"data{n}" / "media").iterdir()), data]
    sha256sum_seconds(files)  # the files were just written; this only makes sure they are all in the page cache
    t_sum = min(sha256sum_seconds(files)[0] for _ in range(2))
    t_ssl = min(openssl_seconds(files)[0] for _ in range(2))
    floors = [decode_floor_seconds(files[:-1], tmp / f"floor{n}-{k}") for k in range(2)]
    t_decode, cpu_decode = min(t for t, _ in floors), min(c for _, c in floors)
    imports: list[tuple[float, ImportReport]] = []
    import_cpus: list[float] = []
    workspaces: list[Workspace] = []
    for attempt in range(IMPORT_REPEATS if db_url is None else 1):  # one PostgreSQL database per run
        for earlier in workspaces:
            earlier.close()
            shutil.rmtree(earlier.root)
        workspaces = [fresh_workspace(tmp / f"ws{n}-{attempt}", db_url)]
        cpu = cpu_seconds()
        imports.append(timed(partial(import_items, workspaces[0], data)))
        import_cpus.append(cpu_seconds() - cpu)
    ws = workspaces[0]
    t_import, report = min(t for t, _ in imports), imports[-1][1]
    assert len(report.created) == n
    # a large import leaves the media's facts and signatures to the step `curate import items` starts in the
    # background (curation.audit.measuring); it is timed on its own, before anything else is measured
    cpu = cpu_seconds()
    t_measure, measured = timed(lambda: measure_pending(ws))
    cpu_measure = cpu_seconds() - cpu  # its worker processes included: they have ended when it returns
    assert measured == (len(files) - 1 if report.measuring_deferred else 0)
    t_reimport, report = timed(lambda: import_items(ws, data))
    assert len(report.unchanged) == n
    cli = [sys.executable, "-m", "omnicurate", "-w", str(ws.root), "status", "--json"]
    t_startup, _ = best_of(2, lambda: subprocess.run(CLI_HELP, check=True, capture_output=True))
    t_status_cli, out = timed(lambda: subprocess.run(cli, check=True, capture_output=True, text=True).stdout)
    assert len(json.loads(out)) == n
    rows = [r for i in range(n) for r in seven_records(f"item-{i:06d}", "ABCD"[i % 4])]
    pending = [PendingReview(k + 1, REVIEW_MODELS[r["stage"]].model_validate(r)) for k, r in enumerate(rows)]
    t_record, rep = timed(lambda: record_reviews(ws, pending))
    assert rep.recorded == 7 * n
    t_select, cpu_select, selected = best_cpu_of(REPEATS, lambda: raw_select(ws))
    assert selected == 8 * n
    t_derive, cpu_derive, statuses = best_cpu_of(REPEATS, lambda: derive_status(ws))
    assert sum(s.stage == "group_integration" for s in statuses) == n
    run_cli = partial(subprocess.run, cli, check=True, capture_output=True, text=True)
    t_status_7n_cold, cpu_status_7n_cold, out = best_cpu_of(
        CLI_REPEATS, lambda: run_cli().stdout, before=lambda: forget_statuses(ws)
    )
    assert sum(s["stage"] == "group_integration" for s in json.loads(out)) == n
    groups = iter(range(CLI_REPEATS))
    t_status_7n, cpu_status_7n, out = best_cpu_of(
        CLI_REPEATS, lambda: run_cli().stdout, before=lambda: one_more_review(ws, next(groups))
    )
    assert json.loads(out) == [st.as_json() for st in derive_status(ws)], "the kept statuses are the derived ones"
    ws.close()
    return {
        "status_command": cli,
        "workspace": str(ws.root),
        "n": n,
        "media_files": len(files) - 1,
        "sha256sum_s": t_sum,
        "openssl_s": t_ssl,
        "import_s": t_import,
        "measure_s": t_measure,
        "decode_floor_s": t_decode,
        "import_cpu_s": min(import_cpus),
        "measure_cpu_s": cpu_measure,
        "decode_floor_cpu_s": cpu_decode,
        "measuring_deferred": report.measuring_deferred,
        "items_per_s": n / t_import,
        "reimport_s": t_reimport,
        "cli_help_s": t_startup,
        "status_cli_s": t_status_cli,
        "record_7n_s": t_record,
        "select_7n_s": t_select,
        "derive_7n_s": t_derive,
        "status_cli_7n_s": t_status_7n,
        "select_7n_cpu_s": cpu_select,
        "derive_7n_cpu_s": cpu_derive,
        "status_cli_7n_cpu_s": cpu_status_7n,
        "status_cli_7n_cold_s": t_status_7n_cold,
        "status_cli_7n_cold_cpu_s": cpu_status_7n_cold,
        "loadavg": list(os.getloadavg()),
        "memory": host_memory(),
    }


IMPORT_GOAL_RATIO = 20.0
"""Issue 27: import at 10k items <= 20x the OpenSSL hash floor of the same files."""
IMPORT_FACTS_GOAL_RATIO = 3.0
"""Issue 47: an import with its media's facts and signatures <= 3x copying, hashing and decoding each medium once."""
IMPORT_GOAL_GROWTH = 10.5
"""Issue 27: import time from 1k to 10k items grows <= 10.5x."""


def import_figures(results: list[dict]) -> list[str]:
    """The import's lines of the report: per size its ratio to the OpenSSL floor and items/s, then the growth
    from the smallest size to the largest, each beside its goal and the load average it was measured under."""
    lines = [
        f"import of {r['n']} items: {r['import_s'] / r['openssl_s']:.1f}x the OpenSSL hash floor "
        f"({r['import_s']:.2f} s vs {r['openssl_s']:.3f} s; goal at 10k <= {IMPORT_GOAL_RATIO:g}x), "
        f"{r['items_per_s']:.0f} items/s (load average {r['loadavg'][0]:.2f}); "
        + (
            f"then measuring its media's facts and signatures (the background step): {r['measure_s']:.2f} s"
            if r["measuring_deferred"]
            else "its media's facts and signatures measured by the import itself"
        )
        for r in results
    ]
    lines += [
        f"import of {r['n']} items with their facts (import + measuring step, {r['import_s'] + r['measure_s']:.2f} s): "
        f"{(r['import_s'] + r['measure_s']) / r['decode_floor_s']:.2f}x copying, hashing and decoding each medium "
        f"once ({r['decode_floor_s']:.2f} s; goal <= {IMPORT_FACTS_GOAL_RATIO:g}x); in CPU seconds (worker "
        f"processes included): {(r['import_cpu_s'] + r['measure_cpu_s']) / r['decode_floor_cpu_s']:.2f}x "
        f"({r['import_cpu_s']:.2f} + {r['measure_cpu_s']:.2f} vs {r['decode_floor_cpu_s']:.2f})"
        for r in results
    ]
    if len(results) > 1:
        a, b = results[0], results[-1]
        lines.append(
            f"import growth {a['n']} -> {b['n']} items ({b['n'] / a['n']:.0f}x): {b['import_s'] / a['import_s']:.1f}x "
            f"(goal for 10x <= {IMPORT_GOAL_GROWTH:g}x)"
        )
    return lines


def status_side_by_side(results: list[dict]) -> dict[int, float]:
    """`curate status --json` with records on each size's workspace again, the sizes alternating: each size's
    time above was taken minutes apart from the others', and this machine's speed drifts more than that between
    two minutes. Each after one more review, as above. Size -> the best of ``CLI_REPEATS`` runs."""
    best = {r["n"]: float("inf") for r in results}
    for k in range(CLI_REPEATS):
        for r in results:
            ws = Workspace.open(Path(r["workspace"]))
            one_more_review(ws, k, reviewer="rev6")
            ws.close()
            took, out = timed(
                lambda r=r: subprocess.run(r["status_command"], check=True, capture_output=True, text=True).stdout
            )
            assert len(json.loads(out)) == r["n"]
            best[r["n"]] = min(best[r["n"]], took)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--db", help="PostgreSQL URL of a fresh database (default: SQLite)")
    parser.add_argument(
        "--scratch",
        type=Path,
        default=None,
        help="folder for the temporary files and workspaces (e.g. /dev/shm: in memory, without the disk's noise)",
    )
    args = parser.parse_args()
    compile_sources(ROOT)  # new processes are timed: with the bytecode caches a user has
    print(f"scratch folder: {args.scratch or tempfile.gettempdir()}")
    if args.scratch is not None:
        args.scratch.mkdir(parents=True, exist_ok=True)  # a folder named for the run may not exist yet
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix="import-bench-") as tmp:
        results = [run(n, Path(tmp), args.db) for n in args.sizes]
        side_by_side = status_side_by_side(results) if args.db is None and len(results) > 1 else None
    for r in results:
        del r["status_command"], r["workspace"]
        if side_by_side is not None:
            r["status_cli_7n_side_by_side_s"] = side_by_side[r["n"]]
    print(
        "seconds, wall; floors: sha256sum and OpenSSL (hashlib.sha256) over the same files (media and JSONL), "
        "a raw SELECT of the rows the derivation reads; 7n = after 7 review records per item; status CLI is "
        "`curate status --json` in a new process, start-up included (CLI --help: the bare start-up)"
    )
    print(
        f"{'n':>7} {'import s':>9} {'items/s':>8} {'/sum':>6} {'/ssl':>6} {'reimport':>9} | {'--help':>6} "
        f"{'status':>7} | {'record 7n':>10} {'select 7n':>10} {'derive 7n':>10} {'/select':>8} "
        f"{'status 7n':>10} {'/select':>8}"
    )
    for r in results:
        print(
            f"{r['n']:>7} {r['import_s']:>9.2f} {r['items_per_s']:>8.0f} {r['import_s'] / r['sha256sum_s']:>5.1f}x "
            f"{r['import_s'] / r['openssl_s']:>5.1f}x {r['reimport_s']:>9.2f} | {r['cli_help_s']:>6.2f} "
            f"{r['status_cli_s']:>7.2f} | {r['record_7n_s']:>10.2f} {r['select_7n_s']:>10.3f} "
            f"{r['derive_7n_s']:>10.3f} {r['derive_7n_s'] / r['select_7n_s']:>7.1f}x {r['status_cli_7n_s']:>10.2f} "
            f"{r['status_cli_7n_s'] / r['select_7n_s']:>7.1f}x"
        )
        print(
            f"{'':>7} floors: sha256sum {r['sha256sum_s']:.3f} s, OpenSSL {r['openssl_s']:.3f} s "
            "(load average {:.2f} {:.2f} {:.2f})".format(*r["loadavg"])
        )
        print(
            f"{'':>7} CPU s (user+system): select 7n {r['select_7n_cpu_s']:.3f}, derive 7n "
            f"{r['derive_7n_cpu_s']:.3f} ({r['derive_7n_cpu_s'] / r['select_7n_cpu_s']:.1f}x the select), "
            f"status 7n {r['status_cli_7n_cpu_s']:.2f}"
        )
        print(
            f"{'':>7} status 7n with nothing kept (the first after the records; curation.status_memo): "
            f"{r['status_cli_7n_cold_s']:.2f} s, {r['status_cli_7n_cold_cpu_s']:.2f} CPU s"
        )
    if len(results) > 1:
        a, b = results[0], results[-1]
        k = b["n"] / a["n"]
        for key in (
            "import_s",
            "status_cli_s",
            "record_7n_s",
            "select_7n_s",
            "derive_7n_s",
            "status_cli_7n_s",
            "derive_7n_cpu_s",
            "status_cli_7n_cpu_s",
            "status_cli_7n_cold_s",
        ):
            print(f"growth of {key} for {k:.0f}x items: {b[key] / a[key]:.1f}x")
    if side_by_side is not None:
        a, b = results[0]["n"], results[-1]["n"]
        print(
            f"status 7n timed side by side (the sizes alternating, best of {CLI_REPEATS} each, load average "
            "{:.2f} {:.2f} {:.2f}): ".format(*os.getloadavg())
            + ", ".join(f"{n} items {t:.2f} s" for n, t in side_by_side.items())
            + f"; growth for {b // a}x items: {side_by_side[b] / side_by_side[a]:.1f}x (goal for 10x <= 2x)"
        )
    print("\n".join(import_figures(results)))
    if results:
        print(host_memory_note(results[-1]["memory"]))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
