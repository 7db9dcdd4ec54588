"""Benchmark: push a grammar stage to a real Label Studio server, annotate every task twice, pull.

Reports tasks/s for push and annotations/s for pull at two sizes, how the time grows with n, and
baselines measured in the same run: a bare import of the same tasks into a fresh project (the server's own
floor of a push) and the bare JSON export of the project (the floor of a pull). A second push, which
changes nothing, is timed too. With a grammar quorum above 1 (default 2), every new task's overlap is set
one request at a time: that is the cost of keeping Label Studio's queue in task order.
Starts its own server from the template of `.ci/setup.d/40-labelstudio.sh`.

Run: python benchmarks/labelstudio_roundtrip.py [--sizes 24 96] [--quorum 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annotation_ui.labelstudio import stages  # noqa: E402
from annotation_ui.labelstudio.connection import Connection  # noqa: E402
from annotation_ui.labelstudio.stages import pull_stages, push_stage  # noqa: E402
from annotation_ui.labelstudio.tables import LsTask  # noqa: E402
from curation.items import import_items  # noqa: E402
from curation.workspace import Workspace  # noqa: E402
from devsupport.media_factory import item_row, write_items  # noqa: E402
from tests.annotation_ui.labelstudio.server import running_server  # noqa: E402


def one_size(server, root: Path, n: int, quorum: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    ws = Workspace.init(root / f"ws{n}")
    ws.settings.review.grammar_quorum = quorum
    for name in ("ann1", "rev1", "rev2"):
        ws.add_person(name, ["author"] if name == "ann1" else ["reviewer"], email=f"{name}@omnicurate.test")
    rows = [
        item_row(f"g{i}-{s}", group=f"g{i}", answer=s.upper(), image="media/shared.jpg")
        for i in range(n // 2)
        for s in "ab"
    ]
    import_items(ws, write_items(root / f"in{n}", rows))
    os.environ.update(
        LABEL_STUDIO_URL=server.url,
        LABEL_STUDIO_API_KEY=server.token,
        LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT=str(server.document_root),
    )
    connection = Connection.resolve(ws.settings.labelstudio)
    started = time.perf_counter()
    report = push_stage(ws, connection, "grammar")
    push_s = time.perf_counter() - started
    started = time.perf_counter()
    again = push_stage(ws, connection, "grammar")
    assert again.kept == n, again
    repush_s = time.perf_counter() - started
    bare = server.client().projects.create(title=f"bare import {n}", label_config=stages.label_config("grammar"))
    started = time.perf_counter()
    server.client().projects.import_tasks(
        id=bare.id,
        request=[{"context": f"c{i}", "question": "q", "options_html": "", "notes_html": ""} for i in range(n)],
    )
    import_s = time.perf_counter() - started
    with ws.session() as s:
        task_ids = list(s.execute(select(LsTask.task_id).where(LsTask.project_key == "stage:grammar")).scalars())
    result = [{"from_name": "verdict", "to_name": "context", "type": "choices", "value": {"choices": ["pass"]}}]
    for user in server.users[1:3]:
        client = server.client(user["token"])
        for task_id in task_ids:
            client.annotations.create(id=task_id, result=result)
    started = time.perf_counter()
    server.client().projects.exports.as_json(report.project_id)
    export_s = time.perf_counter() - started
    started = time.perf_counter()
    (pulled,) = pull_stages(ws, connection, ["grammar"])
    pull_s = time.perf_counter() - started
    assert pulled.recorded == 2 * len(task_ids), pulled.summary()
    ws.close()
    return {
        "tasks": len(task_ids),
        "annotations": pulled.annotations,
        "push_s": push_s,
        "repush_s": repush_s,
        "import_s": import_s,
        "export_s": export_s,
        "pull_s": pull_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs=2, default=[24, 96], help="two item counts")
    parser.add_argument("--quorum", type=int, default=2, help="grammar quorum (overlap per task)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, running_server(Path(tmp) / "server") as server:
        (Path(tmp) / "warm-up").mkdir()
        one_size(server, Path(tmp) / "warm-up", 4, args.quorum)  # warm the server up (a workspace of its own)
        figures = [one_size(server, Path(tmp), n, args.quorum) for n in args.sizes]
    for f in figures:
        print(
            f"{f['tasks']:5d} tasks: push {f['push_s']:.2f} s ({f['tasks'] / f['push_s']:.0f} tasks/s; "
            f"bare import {f['import_s']:.2f} s, push = {f['push_s'] / f['import_s']:.1f}x); "
            f"second push {f['repush_s']:.2f} s; "
            f"pull {f['pull_s']:.2f} s for {f['annotations']} annotations "
            f"({f['annotations'] / f['pull_s']:.0f}/s); bare export {f['export_s']:.2f} s "
            f"(pull = {f['pull_s'] / f['export_s']:.1f}x the export)"
        )
    small, large = figures
    scale = large["tasks"] / small["tasks"]
    print(
        json.dumps(
            {
                "n_ratio": scale,
                "push_growth": round(large["push_s"] / small["push_s"], 2),
                "repush_growth": round(large["repush_s"] / small["repush_s"], 2),
                "pull_growth": round(large["pull_s"] / small["pull_s"], 2),
                "export_growth": round(large["export_s"] / small["export_s"], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
