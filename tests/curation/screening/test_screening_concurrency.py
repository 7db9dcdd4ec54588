"""Issue 22, case 5, on SQLite and PostgreSQL: three `curate screen` and three `curate story promote` at once
serialize (no IntegrityError traceback): each exits 0 and the workspace holds each result and item once; three
`curate init` of one new folder at once all succeed on one schema."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import func, select

from curation.screening.tables import ScreenResult
from curation.tables import Item
from curation.workspace import Workspace
from omnicurate.demo.story_corpus import build_corpus
from tests.conftest import _pg_database


def _at_once(
    curate_process: Callable[..., subprocess.Popen[str]], *commands: list[str]
) -> list[subprocess.CompletedProcess[str]]:
    procs = [curate_process(*c) for c in commands]
    done = []
    for proc, command in zip(procs, commands, strict=True):
        out, err = proc.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(command, proc.returncode, out, err))
    return done


def test_concurrent_screens_and_promotes_serialize(
    workspace: Workspace, tmp_path: Path, curate_process: Callable[..., subprocess.Popen[str]]
) -> None:
    corpus = build_corpus(tmp_path / "corpus", books=3)
    w = ["-w", str(workspace.root)]
    [imported] = _at_once(curate_process, [*w, "import", "candidates", str(corpus.candidates)])
    assert imported.returncode == 0, imported.stderr
    screen = [*w, "screen", "--backend", f"replay:{corpus.replay}"]
    for run in _at_once(curate_process, screen, screen, screen):
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr
    with workspace.session() as s:
        rows = s.execute(select(ScreenResult.candidate_id, ScreenResult.step)).all()
    assert rows and len(rows) == len(set(rows))  # one result per candidate and step
    promote = [*w, "story", "promote"]
    runs = _at_once(curate_process, promote, promote, promote)
    for run in runs:
        assert run.returncode == 0, run.stderr
    with workspace.session() as s:
        items = s.execute(select(func.count()).select_from(Item)).scalar_one()
    assert items > 0
    assert sum(int(r.stdout.split(" story items created")[0].split()[-1]) for r in runs) == items


def test_concurrent_inits_of_one_folder_all_succeed(
    tmp_path: Path, db_backend: str, curate_process: Callable[..., subprocess.Popen[str]]
) -> None:
    url, drop = _pg_database() if db_backend == "postgres" else (None, None)
    try:
        root = tmp_path / "fresh"
        command = ["init", str(root), *(["--db", url] if url else [])]
        for run in _at_once(curate_process, command, command, command):
            assert run.returncode == 0, run.stderr
        ws = Workspace.open(root)
        try:
            ws.add_person("ann1", ["author"])
            assert [p.name for p in ws.people()] == ["ann1"]
        finally:
            ws.close()
    finally:
        if drop:
            drop()
