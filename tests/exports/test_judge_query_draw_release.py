"""A judge release records the query draws (issue 46; Judge Anything §2.1, Table 5): the manifest's
``query_curation.draws`` states, per draw, what the workspace recorded — the file's name and sha256, the seed,
the quotas, how many queries were eligible, the ids drawn and those held for their licence — and the release
still verifies and reproduces."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sqlalchemy import select
from typer.testing import CliRunner

from curation.kinds.judge.caption_draw_tables import JudgeQueryDraw
from curation.workspace import Workspace
from omnicurate.cli.main import app

runner = CliRunner()


def curate(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(root), *args], catch_exceptions=False)


def candidates(path: Path) -> Path:
    """Twelve text->text candidates over two sources, one under a closed and one under an unknown licence."""
    lines = [
        {"id": f"dq-{n:02d}", "instruction": f"Name {n} rivers of continent {n}.", "output": "text",
         "source": f"B{n % 2}", "license": "CC-BY-4.0"}
        for n in range(12)
    ] + [
        {"id": "dq-nc", "instruction": "Sing a song.", "output": "text", "source": "B0", "license": "CC BY-NC 4.0"},
        {"id": "dq-zz", "instruction": "Hum a tune.", "output": "text", "source": "B1", "license": "Our own terms"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_the_release_records_each_draw_as_the_workspace_did(judge_demo_folder: Path, tmp_path: Path) -> None:
    demo = json.loads((judge_demo_folder / "releases" / "1.0.0" / "manifest.json").read_text())
    assert demo["query_curation"]["draws"] == [], "the demo imports its queries whole: no draw"

    source = candidates(tmp_path / "candidates.jsonl")
    imported = curate(judge_demo_folder, "judge", "import", "queries", str(source), "--per-source", "3",
                      "--per-task", "4", "--seed", "11", "--json")  # fmt: skip
    assert imported.exit_code == 0, imported.output
    said = json.loads(imported.stdout)["draw"]
    ws = Workspace.open(judge_demo_folder)
    try:
        with ws.session() as s:
            [row] = list(s.execute(select(JudgeQueryDraw)).scalars())
    finally:
        ws.close()

    built = curate(judge_demo_folder, "release", "build", "1.1.0", "--json")
    assert built.exit_code == 0, built.output
    folder = Path(json.loads(built.stdout)["path"])
    [released] = json.loads((folder / "manifest.json").read_text())["query_curation"]["draws"]
    assert released == {
        "file": "candidates.jsonl",
        "file_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "seed": 11,
        "per_task": 4,
        "per_source": 3,
        "eligible": 12,
        "drawn": row.drawn,
        "held": [{"id": "dq-nc", "license": "CC BY-NC 4.0"}, {"id": "dq-zz", "license": "Our own terms"}],
    }
    assert released["drawn"] == said["drawn"] and len(row.drawn) == 4 and row.eligible == said["eligible"]

    verified = curate(judge_demo_folder, "release", "verify", str(folder), "--json")
    assert verified.exit_code == 0 and json.loads(verified.stdout)["ok"], verified.output
    reproduced = curate(judge_demo_folder, "release", "reproduce", str(folder), "--json")
    assert reproduced.exit_code == 0, reproduced.output
