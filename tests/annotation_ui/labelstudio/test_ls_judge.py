"""Judge Anything's score and pair samples through a real Label Studio server: pushed as rating campaigns,
pulled back as the same annotation records the Streamlit pages write, with the same checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from annotation_ui.labelstudio.connection import Connection
from annotation_ui.labelstudio.judge_campaigns import label_config, pull_judge, push_judge
from annotation_ui.labelstudio.tables import LsTask
from checker.drafting import ReplayDrafter, draft_checklists
from curation.errors import ValidationFailed
from curation.kinds.judge import annotation_store, draft_store, record_store, sample_store, task_store
from curation.kinds.judge.checklists import first_per_rubric
from curation.kinds.judge.rubrics import CRITERIA, RUBRICS
from curation.kinds.judge.schema import ChecklistSelectionRecord, ResponseReviewRecord
from curation.kinds.judge.tables import JudgeAnnotation, JudgeSample
from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.judge_sources import write_sources
from tests.annotation_ui.labelstudio.lsfixtures import EMAILS, choice, rating
from tests.annotation_ui.labelstudio.server import LsServer

TASKS = ("v2t-01", "t2i-01")
NINETEEN = "t2i-01"
"""The task whose curated checklist holds 19 entries over the six rubrics (the paper's average)."""


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    paths = write_sources(tmp_path_factory.mktemp("judge-ls-src"))
    for name in ("tasks", "responses", "drafts"):
        keep = [x for x in paths[name].read_text().splitlines() if any(f'"{t}"' in x for t in TASKS)]
        paths[name].write_text("\n".join(keep) + "\n")
    return paths


def seed(ws: Workspace, sources: dict[str, Path]) -> None:
    """rev1-3 annotate (with their Label Studio e-mails); maya cross-checks checklists; every sample built."""
    for name in ("rev1", "rev2", "rev3"):
        ws.add_person(name, ["reviewer"], email=EMAILS[name])
    ws.add_person("maya", ["maintainer", "reviewer"])
    task_store.import_tasks(ws, sources["tasks"])
    task_store.import_responses(ws, sources["responses"])
    draft_checklists(ws, ReplayDrafter(str(sources["drafts"])))
    for task in task_store.tasks(ws):
        candidates = draft_store.drafted_candidates(ws, task.id)
        if task.id == NINETEEN:  # every drafted entry (3 per rubric) and one added: 19 over six rubrics
            curated = ChecklistSelectionRecord(
                task=task.id, stage="checklist_curation", reviewer="rev3", selected=[e.id for e in candidates],
                added=[{"rubric": "clarity", "text": "Is the <b>square</b> easy to see?"}],
            )  # fmt: skip
        else:
            curated = ChecklistSelectionRecord(
                task=task.id, stage="checklist_curation", reviewer="rev3", selected=first_per_rubric(candidates)
            )
        record_store.record_selection(ws, curated)
        chosen = [e.id for e in record_store.task_checklist(ws, task.id).curation.checklist]  # type: ignore[union-attr]
        record_store.record_selection(
            ws, ChecklistSelectionRecord(task=task.id, stage="checklist_crosscheck", reviewer="maya", selected=chosen)
        )
    assert len(record_store.task_checklist(ws, NINETEEN).final) == 19
    for r in task_store.responses(ws):
        record_store.record_response_review(ws, ResponseReviewRecord(response=r.id, reviewer="maya", usable=True))
    assert sample_store.build_samples(ws) == {"score": 6, "pair": 4}


def sample_tasks(ws: Workspace, kind: str) -> dict[str, int]:
    """sample id -> Label Studio task id of the kind's open tasks."""
    with ws.session() as s:
        rows = s.execute(select(LsTask).where(LsTask.project_key == f"judge:{kind}", LsTask.state == "active"))
        return {r.subject: r.task_id for r in rows.scalars()}


def scores(value: int, **other: int) -> list[dict]:
    return [rating(c, other.get(c, value), "response") for c in CRITERIA]


def applied(ws: Workspace) -> dict[tuple[str, str], dict]:
    with ws.session() as s:
        rows = s.execute(select(JudgeAnnotation).where(JudgeAnnotation.applied)).scalars()
        return {(r.sample, r.annotator): r.payload for r in rows}


def applied_count(ws: Workspace, sample: str) -> int:
    with ws.session() as s:
        return s.get(JudgeSample, sample).applied


def test_score_samples_round_trip_with_the_apps_checks(
    workspace: Workspace, connection: Connection, ls_env: LsServer, sources: dict[str, Path]
) -> None:
    seed(workspace, sources)
    samples = [s.id for s in sample_store.samples(workspace, "score")]
    a, b, c, d = samples[:4]
    annotation_store.save_annotation(workspace, a, "rev1", dict.fromkeys(CRITERIA, 4), apply=True)  # in the app first

    pushed = push_judge(workspace, connection, "score")
    assert pushed.created == 6
    assert push_judge(workspace, connection, "score").created == 0, "pushing again adds nothing"
    project = ls_env.client().projects.get(pushed.project_id)
    assert project.label_config == label_config("score") and project.label_config.count("<Rating ") == 7
    published = {f.suffix for f in (ls_env.document_root / "omnicurate").iterdir()}
    assert {".mp4", ".png"} <= published, "the video input and the image responses are served as local files"
    on_server = list(ls_env.client().tasks.list(project=pushed.project_id, fields="all"))
    assert {t.overlap for t in on_server} == {3}, "each sample asks for the configured annotators (three)"
    for task in on_server:
        assert set(task.data) == {"task", "checklist", "response", "omnicurate_ref"}
        shown = task.data["checklist"]
        if "green square" in task.data["task"]:  # t2i-01's instruction
            assert shown.count("<li>") == 19 and all(f"<b>{r}</b>" in shown for r in RUBRICS)
            assert "Is the &lt;b&gt;square&lt;/b&gt; easy to see?" in shown, "typed text is escaped, not markup"
        else:
            assert shown.count("<li>") == 6
        assert not any(system in json.dumps(task.data) for system in ("sys-a", "sys-b", "sys-c"))

    tasks = sample_tasks(workspace, "score")
    rev1, rev2 = ls_env.client(ls_env.users[1]["token"]), ls_env.client(ls_env.users[2]["token"])
    rev3 = ls_env.annotator(EMAILS["rev3"])
    rev1.annotations.create(id=tasks[a], result=scores(2))  # rev1 applied a in the app already
    made_b = rev1.annotations.create(id=tasks[b], result=scores(5, creativity=3))
    rev2.annotations.create(id=tasks[b], result=scores(6))  # out of range
    rev2.annotations.create(id=tasks[c], result=scores(3)[:-1])  # a rubric left out
    made = rev3.annotations.create(id=tasks[a], result=scores(1))
    rev3.annotations.create(id=tasks[d], result=[], was_cancelled=True)
    rev2.annotations.create(id=tasks[a], result=scores(3))  # a's third annotator

    pulled = pull_judge(workspace, connection, "score")
    assert (pulled.recorded, pulled.skipped, pulled.annotations) == (3, 1, 7)
    reasons = sorted(r["reason"] for r in pulled.refused)
    assert reasons == [
        "field 'completeness' is required but missing",
        "overall: rating 6 is out of range 1–5",
        f"rev1 already annotated sample {a} in the app: nobody annotates a sample twice",
    ]
    records = applied(workspace)
    assert records[(b, "rev1")] == {"scores": {**dict.fromkeys(CRITERIA, 5), "creativity": 3}}
    assert records[(a, "rev1")] == {"scores": dict.fromkeys(CRITERIA, 4)}, "the app's record is left alone"
    assert records[(a, "rev3")] == {"scores": dict.fromkeys(CRITERIA, 1)}
    assert records[(a, "rev2")] == {"scores": dict.fromkeys(CRITERIA, 3)}
    assert applied_count(workspace, a) == 3 and applied_count(workspace, b) == 1
    events = [e for e in workspace.events(f"judge_sample:{b}") if e.action == "judge.score_annotation"]
    assert [e.after["via"] for e in events] == [f"labelstudio judge:score annotation {made_b.id}"]
    again = pull_judge(workspace, connection, "score")
    assert (again.recorded, again.replaced, again.unchanged, again.withdrawn) == (0, 0, 3, 0)

    # The next push closes the sample that has its annotators.
    assert push_judge(workspace, connection, "score").retired == 1
    assert a not in sample_tasks(workspace, "score")

    rev3.annotations.delete(id=made.id)
    withdrawn = pull_judge(workspace, connection, "score")
    assert withdrawn.withdrawn == 1 and (a, "rev3") not in applied(workspace)
    assert applied_count(workspace, a) == 2, "the sample is open again"
    assert push_judge(workspace, connection, "score").reopened == 1


def test_pair_samples_record_choices_and_refuse_unknown_options(
    workspace: Workspace, connection: Connection, ls_env: LsServer, sources: dict[str, Path]
) -> None:
    seed(workspace, sources)
    ws = ["-w", str(workspace.root)]
    pushed = CliRunner().invoke(app, [*ws, "judge", "ls", "push", "pair", "--json"])
    assert pushed.exit_code == 0, pushed.output
    assert json.loads(pushed.stdout)["kind"] == "pair" and json.loads(pushed.stdout)["created"] == 4
    tasks = sample_tasks(workspace, "pair")
    first, second = sorted(tasks)[:2]
    on_server = ls_env.client().tasks.get(id=tasks[first])
    assert set(on_server.data) == {"task", "checklist", "first", "second", "omnicurate_ref"}
    rev1, rev2 = ls_env.client(ls_env.users[1]["token"]), ls_env.client(ls_env.users[2]["token"])
    picks = dict.fromkeys(CRITERIA, "first") | {"clarity": "tie", "coherence": "second"}
    rev1.annotations.create(id=tasks[first], result=[choice(c, "first", v) for c, v in picks.items()])
    rev2.annotations.create(
        id=tasks[second], result=[choice(c, "first", "A" if c == "overall" else "tie") for c in CRITERIA]
    )
    pulled = CliRunner().invoke(app, [*ws, "judge", "ls", "pull", "pair", "--strict"])
    assert pulled.exit_code == 1, "--strict: an annotation was refused"
    said = " ".join(pulled.output.split())
    assert "1 recorded" in said and "overall: unknown option(s) 'A' (allowed: first, second, tie)" in said
    assert applied(workspace) == {(first, "rev1"): {"choices": picks}}
    assert pull_judge(workspace, connection, "pair").unchanged == 1


def test_unknown_kind_is_refused(workspace: Workspace) -> None:
    with pytest.raises(ValidationFailed, match="unknown sample kind 'story'"):
        push_judge(workspace, None, "story")  # type: ignore[arg-type]
