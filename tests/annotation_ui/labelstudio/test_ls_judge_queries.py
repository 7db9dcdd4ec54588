"""The judge kind's query screening through a real Label Studio server (``curate ls push/pull query_screen``):
the queries waiting for a screener pushed as tasks, annotated, pulled back as the records the app's page
writes (``query_refine`` then ``query_screen``), with the page's rules and the engine's shared checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import select
from typer.testing import CliRunner

from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.judge_queries import KEY, LABEL_CONFIG, pull_queries, push_queries
from annotation_ui.labelstudio.tables import LsTask
from curation.kinds.judge.queries import (
    QueryRefineRecord,
    QueryScreenRecord,
    import_queries,
    query_revisions,
    query_statuses,
)
from curation.kinds.judge.tables import JudgeRecord
from curation.workspace import Workspace
from devsupport.media_factory import make_image
from omnicurate.cli.main import app
from tests.annotation_ui.labelstudio.lsfixtures import EMAILS, choice
from tests.annotation_ui.labelstudio.server import LsServer

REWORDED = "Describe this sound in one sentence."


def seed(ws: Workspace, folder: Path) -> None:
    """rev1 and rev2 screen; ann1 is an author only; three candidate queries, one with an image input."""
    ws.add_person("rev1", ["reviewer"], email=EMAILS["rev1"])
    ws.add_person("rev2", ["reviewer"], email=EMAILS["rev2"])
    ws.add_person("ann1", ["author"], email=EMAILS["ann1"])
    folder.mkdir()
    make_image(folder / "red.png", "red", fmt="PNG")
    lines = [
        {"id": "q-1", "instruction": "Describe **this** <b>sound</b>.", "output": "text", "source": "AirBench",
         "license": "CC-BY-4.0"},
        {"id": "q-2", "instruction": "Generate an explicit image.", "output": "image", "source": "T2ICompBench",
         "license": "CC-BY-4.0"},
        {"id": "q-3", "instruction": "What colour is this shape?", "inputs": {"image": "red.png"}, "output": "text",
         "source": "MMBench", "license": "CC-BY-4.0"},
    ]  # fmt: skip
    path = folder / "queries.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_queries(ws, path)


def text(name: str, value: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "query", "type": "textarea", "value": {"text": [value]}}


def query_tasks(ws: Workspace, state: str = "active") -> dict[str, int]:
    with ws.session() as s:
        rows = s.execute(select(LsTask).where(LsTask.project_key == KEY, LsTask.state == state)).scalars()
        return {r.subject.removeprefix("query:"): r.task_id for r in rows}


def screenings(ws: Workspace) -> dict[tuple[str, str], dict[str, Any]]:
    with ws.session() as s:
        rows = s.execute(select(JudgeRecord).where(JudgeRecord.stage == "query_screen")).scalars()
        return {(r.subject, r.reviewer): r.payload for r in rows}


def test_query_screening_round_trip_records_what_the_page_records(
    workspace: Workspace, connection: Connection, ls_env: LsServer, tmp_path: Path
) -> None:
    seed(workspace, tmp_path / "in")
    ws = ["-w", str(workspace.root)]
    pushed = CliRunner().invoke(app, [*ws, "ls", "push", "query_screen", "--json"])
    assert pushed.exit_code == 0, pushed.output
    assert (json.loads(pushed.stdout)["stage"], json.loads(pushed.stdout)["created"]) == ("query_screen", 3)
    assert push_queries(workspace, connection).created == 0, "pushing again adds nothing"
    project = ls_env.client().projects.get(json.loads(pushed.stdout)["project"])
    assert project.label_config == LABEL_CONFIG
    assert any(f.suffix == ".png" for f in (ls_env.document_root / "omnicurate").iterdir()), "the input is served"
    tasks = query_tasks(workspace)
    shown = ls_env.client().tasks.get(id=tasks["q-1"])
    assert set(shown.data) == {"query", "suggestion", "omnicurate_ref"}
    assert "Describe **this** &lt;b&gt;sound&lt;/b&gt;." in shown.data["query"], "typed text is escaped"
    (prefill,) = list(ls_env.client().predictions.list(task=tasks["q-1"]))
    assert prefill.result[0]["value"] == {"text": ["Describe **this** <b>sound</b>."]}, "the field starts as is"

    rev1, rev2 = ls_env.client(ls_env.users[1]["token"]), ls_env.client(ls_env.users[2]["token"])
    ann1 = ls_env.annotator(EMAILS["ann1"])
    keep = choice("decision", "query", "keep")
    rev1.annotations.create(id=tasks["q-1"], result=[keep, text("instruction", REWORDED), text("why", "no length")])
    rev2.annotations.create(id=tasks["q-2"], result=[choice("decision", "query", "drop")])  # no reason
    rev1.annotations.create(id=tasks["q-2"], result=[choice("decision", "query", "maybe")])
    ann1.annotations.create(id=tasks["q-3"], result=[keep])
    dropped = rev2.annotations.create(
        id=tasks["q-3"], result=[choice("decision", "query", "drop"), choice("reason", "query", "nsfw")]
    )

    pulled = CliRunner().invoke(app, [*ws, "ls", "pull", "query_screen", "--json", "--strict"])
    assert pulled.exit_code == 1, "--strict: annotations were refused"
    (report,) = json.loads(pulled.stdout)
    assert (report["stage"], report["annotations"], report["recorded"]) == ("query_screen", 5, 2)
    assert sorted((r["subject"], r["user"], r["reason"]) for r in report["refused"]) == [
        ("query:q-2", EMAILS["rev1"], "decision: unknown option(s) 'maybe' (allowed: keep, drop)"),
        ("query:q-2", EMAILS["rev2"], "a dropped query needs a reason: nsfw, low_quality, out_of_scope"),
        ("query:q-3", EMAILS["ann1"], f"'ann1' ({EMAILS['ann1']}) does not have the maintainer or reviewer role"),
    ]
    assert {s.id: (s.state, s.reasons) for s in query_statuses(workspace)} == {
        "q-1": ("ready", []),
        "q-2": ("screen", []),
        "q-3": ("dropped", ["screen:nsfw"]),
    }
    page = QueryScreenRecord(query="q-3", reviewer="rev2", decision="drop", reason="nsfw")  # as the page makes it
    assert screenings(workspace) == {
        ("q-1", "rev1"): QueryScreenRecord(query="q-1", reviewer="rev1", decision="keep").model_dump(mode="json"),
        ("q-3", "rev2"): page.model_dump(mode="json"),
    }
    (revision,) = query_revisions(workspace, "q-1")
    refine = QueryRefineRecord(query="q-1", reviewer="rev1", instruction=REWORDED, why="no length")
    assert (revision["by"], revision["instruction"], revision["why"]) == ("rev1", refine.instruction, refine.why)

    again = pull_queries(workspace, connection)
    assert (again.recorded, again.replaced, again.unchanged, len(again.refused)) == (0, 0, 2, 3)
    assert len(query_revisions(workspace, "q-1")) == 1, "a second pull changes nothing"

    repushed = push_queries(workspace, connection)
    assert (repushed.kept, repushed.retired) == (1, 2), "screened queries' tasks are closed, q-2 still waits"
    rev2.annotations.delete(id=dropped.id)
    withdrawn = pull_queries(workspace, connection)
    assert withdrawn.withdrawn == 1 and ("q-3", "rev2") not in screenings(workspace)
    assert {s.id: s.state for s in query_statuses(workspace)}["q-3"] == "screen", "q-3 waits for a screener again"
    assert push_queries(workspace, connection).reopened == 1
