"""Issue 40 for the judge kind's checklist-draft replay and annotation files, through `curate` on SQLite and
PostgreSQL: unknown fields, empty rubric lists, a task drafted twice, two different annotations of one sample by
one person, scores on a pair sample and unknown criteria are each refused as FILE:LINE: field: problem, all of
them at once; a refused file stores nothing (no draft of any task, no annotation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from typer.testing import CliRunner

from curation.kinds.judge import sample_store, task_store
from curation.kinds.judge.rubrics import CRITERIA, RUBRICS
from curation.kinds.judge.tables import JudgeAnnotation, JudgeDraft
from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.judge_sources import write_sources
from tests.curation.kinds.judge.test_judge_store import PEOPLE, curate_all, review_all
from tests.hostile_records import assert_named_refusal, encode, junk_lines, mutated, write_lines

runner = CliRunner()


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_sources(tmp_path_factory.mktemp("judge-src"))


@pytest.fixture
def judge_ws(workspace: Workspace, sources: dict[str, Path]) -> Workspace:
    for name, roles in PEOPLE.items():
        workspace.add_person(name, roles)
    task_store.import_tasks(workspace, sources["tasks"])
    task_store.import_responses(workspace, sources["responses"])
    return workspace


@pytest.fixture
def sampled_ws(judge_ws: Workspace, sources: dict[str, Path]) -> Workspace:
    """Final checklists, reviewed responses and the score and pair samples, nobody's annotation yet."""
    curate_all(judge_ws, sources)
    review_all(judge_ws)
    sample_store.build_samples(judge_ws)
    return judge_ws


def curate(ws: Workspace, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(ws.root), *args])


def count(ws: Workspace, table: Any) -> int:
    with ws.session() as s:
        return s.execute(select(func.count()).select_from(table)).scalar_one()


def drafts(sources: dict[str, Path]) -> list[dict[str, Any]]:
    return [json.loads(x) for x in sources["drafts"].read_text(encoding="utf-8").splitlines()]


# ---- checklist-draft replay -----------------------------------------------------------------------------------


def test_hostile_draft_lines_are_each_named_and_no_task_is_drafted(
    judge_ws: Workspace, sources: dict[str, Path], tmp_path: Path
) -> None:
    lines = drafts(sources)
    lines[0]["temperature"] = 0.7  # unknown field
    lines[1]["checklist"]["creativity"] = []  # an empty rubric list
    lines[2]["checklist"].pop("clarity")  # a rubric left out
    lines[3]["checklist"]["relevance"] = ["Fine?", 3]  # a question that is no text
    lines[4]["model"] = True
    again = {**lines[5], "checklist": {**lines[5]["checklist"], "relevance": ["Is it relevant?"]}}
    hostile = write_lines(tmp_path / "drafts.jsonl", [encode(x) for x in [*lines, again]])
    result = curate(judge_ws, "judge", "draft", "--backend", f"replay:{hostile}")
    assert result.exit_code == 2, result.output
    assert_named_refusal(result.stderr, hostile, len(lines) + 1)
    task = lines[5]["task"]
    for problem in (
        "1: temperature: unknown field",
        "2: checklist: no question for creativity: every rubric needs at least one question",
        "3: checklist: no question for clarity",
        "4: checklist.relevance.1: Input should be a valid string",
        "5: model: Input should be a valid string",
        f"{len(lines) + 1}: task: task {task} is drafted again by the same model (first on line 6); a replay file "
        "holds one draft per task: keep one of the two",
    ):
        assert f"{hostile}:{problem}" in result.stderr, result.stderr
    assert count(judge_ws, JudgeDraft) == 0


def test_a_run_missing_a_task_or_a_caption_drafts_no_task(
    judge_ws: Workspace, sources: dict[str, Path], tmp_path: Path
) -> None:
    """Before: the tasks before the first one without a draft were drafted and stored, then the run failed."""
    lines = drafts(sources)
    video = next(i for i, x in enumerate(lines) if "video" in x["captions"])
    lines[video]["captions"] = {}
    last = lines.pop()
    partial = write_lines(tmp_path / "partial.jsonl", [encode(x) for x in lines])
    result = curate(judge_ws, "judge", "draft", "--backend", f"replay:{partial}")
    assert result.exit_code == 2, result.output
    assert f"{partial}: no draft for task {last['task']}; add its line, or draft the others with --task" in (
        result.stderr
    )
    assert (
        f"{partial}:{video + 1}: captions: task {lines[video]['task']} has a video input: its line needs a video"
        in (result.stderr)
    )
    assert count(judge_ws, JudgeDraft) == 0
    done = curate(judge_ws, "judge", "draft", "--backend", f"replay:{sources['drafts']}", "--json")
    assert done.exit_code == 0, done.output
    assert len(json.loads(done.stdout)["drafted"]) == len(lines) + 1 == count(judge_ws, JudgeDraft)


# ---- annotations ------------------------------------------------------------------------------------------------


def score_line(sample: str, person: str, value: Any = 4) -> dict[str, Any]:
    return {"sample": sample, "annotator": person, "scores": dict.fromkeys(CRITERIA, value)}


def test_two_different_annotations_by_one_person_name_both_lines(sampled_ws: Workspace, tmp_path: Path) -> None:
    first, second = (s.id for s in sample_store.samples(sampled_ws, "score")[:2])
    lines = [
        score_line(first, "ann1"),
        score_line(first, "ann2"),
        score_line(second, "ann1"),
        score_line(first, "ann1", 2),
    ]
    path = write_lines(tmp_path / "annotations.jsonl", [encode(x) for x in lines])
    result = curate(sampled_ws, "judge", "import", "annotations", str(path))
    assert result.exit_code == 2, result.output
    assert_named_refusal(result.stderr, path, 4)
    assert (
        f"{path}:4: annotator: a second, different annotation of sample {first} by ann1 (the first is on line 1); "
        "keep one of the two"
    ) in result.stderr
    assert count(sampled_ws, JudgeAnnotation) == 0
    same = write_lines(tmp_path / "same.jsonl", [encode(x) for x in [*lines[:3], lines[0]]])  # a repeat, not a change
    done = curate(sampled_ws, "judge", "import", "annotations", str(same), "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["applied"] == 3 == count(sampled_ws, JudgeAnnotation)


def test_wrong_kind_unknown_criteria_samples_and_people_are_named(sampled_ws: Workspace, tmp_path: Path) -> None:
    """Before: scores on a pair sample and an unknown criterion ended in a raw pydantic ValidationError."""
    score = sample_store.samples(sampled_ws, "score")[0].id
    pair = sample_store.samples(sampled_ws, "pair")[0].id
    lines = [
        score_line(pair, "ann1"),
        {**score_line(score, "ann1"), "scores": {**dict.fromkeys(CRITERIA, 4), "humour": 5}},
        {"sample": score, "annotator": "ann2", "choices": dict.fromkeys(CRITERIA, "tie")},
        score_line("s:nowhere:nobody", "ann1"),
        score_line(score, "ghost"),
        {**score_line(score, "ann3"), "scores": {**dict.fromkeys(CRITERIA, 4), "overall": True}},
        {"sample": pair, "annotator": "ann2", "choices": {"overall": "first"}},
        {"sample": pair, "annotator": "ann3"},
    ]
    path = write_lines(tmp_path / "annotations.jsonl", [encode(x) for x in lines])
    result = curate(sampled_ws, "judge", "import", "annotations", str(path))
    assert result.exit_code == 2, result.output
    assert_named_refusal(result.stderr, path, len(lines))
    for problem in (
        f'1: scores: sample {pair} is a pair sample: give "choices" (first, second or tie per criterion), not "scores"',
        '2: scores: unknown criterion "humour"; criteria are overall, relevance,',
        f'3: choices: sample {score} is a score sample: give "scores" (1 to 5 per criterion), not "choices"',
        "4: sample: no judging sample s:nowhere:nobody; list them with `curate judge samples`",
        "5: annotator: unknown person ghost; add them with `curate people add ghost --role reviewer`",
        "6: scores.overall: Input should be a valid integer",
        "7: choices: no value for relevance, trustworthiness, creativity, clarity, coherence, completeness",
        '8: give either "scores" (a score sample) or "choices" (a pair sample)',
    ):
        assert f"{path}:{problem}" in result.stderr, result.stderr
    assert count(sampled_ws, JudgeAnnotation) == 0


def test_a_record_whose_stage_is_no_text_is_named(judge_ws: Workspace, tmp_path: Path) -> None:
    """Before: a list as the stage ended in a TypeError traceback (unhashable type: 'list')."""
    response = task_store.responses(judge_ws)[0].id
    good = {"response": response, "stage": "response_review", "reviewer": "ann3", "usable": True}
    lines = [good, {**good, "stage": ["response_review"]}, {**good, "stage": {"a": 1}}, {**good, "stage": 5}]
    lines.append({k: v for k, v in good.items() if k != "stage"})
    path = write_lines(tmp_path / "records.jsonl", [encode(x) for x in lines])
    result = curate(judge_ws, "judge", "import", "records", str(path))
    assert result.exit_code == 2, result.output
    assert_named_refusal(result.stderr, path, len(lines))
    assert f'{path}:2: stage: unknown stage ["response_review"]; stages are checklist_curation,' in result.stderr
    assert f"{path}:4: stage: unknown stage 5;" in result.stderr
    assert f"{path}:5: stage: required field is missing; stages are" in result.stderr


# ---- properties -------------------------------------------------------------------------------------------------

NEW_DRAFT = {
    "task": "zz-new",
    "model": "gemini-1.5-pro",
    "captions": {"video": "A bar sweeps across tiles."},
    "checklist": {r: [f"Is the {r} fine?"] for r in RUBRICS},
}
DRAFT_PATHS = [
    ("task",),
    ("model",),
    ("captions",),
    ("captions", "video"),
    ("checklist",),
    ("checklist", "relevance"),
    ("checklist", "clarity"),
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    extra=st.lists(
        st.one_of(mutated(NEW_DRAFT, DRAFT_PATHS).map(encode), junk_lines, st.just(encode(NEW_DRAFT))), max_size=2
    )
)
def test_hostile_draft_replays_are_refused_by_name_or_drafted(
    judge_ws: Workspace, sources: dict[str, Path], tmp_path: Path, extra: list[bytes]
) -> None:
    """Property: the demo's drafts plus generated hostile lines are either drafted (exit 0) or refused with
    every problem as FILE:LINE (exit 2), no task drafted; never a traceback."""
    before = count(judge_ws, JudgeDraft)
    path = write_lines(tmp_path / "drafts.jsonl", [*(encode(x) for x in drafts(sources)), *extra])
    result = curate(judge_ws, "judge", "draft", "--backend", f"replay:{path}")
    event(f"exit {result.exit_code}")
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        assert_named_refusal(result.stderr, path, len(drafts(sources)) + len(extra))
        assert count(judge_ws, JudgeDraft) == before
    else:  # every task drafted (a new file is another replay model), or all of them from the cache
        assert count(judge_ws, JudgeDraft) - before in (0, len(drafts(sources)))


ANNOTATION_PATHS = [("sample",), ("annotator",), ("scores",), ("choices",), *(("scores", c) for c in CRITERIA[:3])]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_annotation_files_are_refused_by_name_or_imported(
    sampled_ws: Workspace, tmp_path: Path, data: st.DataObject
) -> None:
    """Property: an annotations file of generated hostile lines (a valid line mutated, or junk) is either imported
    (exit 0) or refused with every problem as FILE:LINE (exit 2), nothing kept; never a traceback."""
    score = sample_store.samples(sampled_ws, "score")[0].id
    base = score_line(score, "ann1")
    lines = data.draw(
        st.lists(
            st.one_of(mutated(base, ANNOTATION_PATHS).map(encode), junk_lines, st.just(encode(base))),
            min_size=1,
            max_size=3,
        )
    )
    before = count(sampled_ws, JudgeAnnotation)
    path = write_lines(tmp_path / "annotations.jsonl", lines)
    result = curate(sampled_ws, "judge", "import", "annotations", str(path))
    event(f"exit {result.exit_code}")
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        assert_named_refusal(result.stderr, path, len(lines))
        assert count(sampled_ws, JudgeAnnotation) == before
