"""`curate demo --kind judge` and `curate judge ...` as users meet them: the demo's report and release,
--json shapes, FILE:LINE errors with exit code 2, and a second demo run that changes nothing."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curation.kinds.judge.rubrics import RUBRICS
from omnicurate.cli.main import app

runner = CliRunner()


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("judge-demo") / "ws"
    result = invoke("demo", str(root), "--kind", "judge")
    assert result.exit_code == 0, result.output
    assert "Elo arena" in result.stdout and "judge-gemini" in result.stdout
    return root


def test_demo_report_and_release(demo: Path) -> None:
    report = json.loads(invoke("-w", str(demo), "judge", "report", "--json", "--bootstrap", "100").stdout)
    scores, pairs = report["scores"], report["pairs"]
    assert (scores["samples"], scores["annotators"], pairs["samples"]) == (34, 3, 22)
    overall = scores["metrics"]["fusion"]["all"]["overall"]
    assert overall["n"] == 34 and 0.5 < overall["pearson"]["value"] <= 1 and len(overall["pearson"]["ci"]) == 2
    assert {"text->text", "text+video->text", "text->video"} <= set(scores["metrics"]["judge-gpt"]["by_modality_pair"])
    assert set(scores["metrics"]["judge-gpt"]["all"]) == {
        "overall", "relevance", "trustworthiness", "creativity", "clarity", "coherence", "completeness"
    }  # fmt: skip
    assert set(pairs["arena"]["elo"]) == {"human", "judge-gemini", "judge-gpt", "judge-omni/checklist", "fusion"}
    consistency = report["consistency"]["judge-omni/checklist"]  # run twice, pairs in both orders
    assert consistency["position"]["pairs"] > 800 and 0.5 < consistency["position"]["value"] < 1
    assert consistency["runs"]["units"] == 56 * 7 and 0.5 < consistency["runs"]["value"] < 1
    queries = {q["id"]: q for q in json.loads(invoke("-w", str(demo), "judge", "queries", "list", "--json").stdout)}
    assert queries["t2t-01b"] == {
        "id": "t2t-01b",
        "state": "held",
        "reasons": ["duplicate:query"],
        "task": None,
        "suggestion": None,
    }
    assert queries["t2i-90"]["reasons"] == ["screen:nsfw"] and queries["t2t-90"]["reasons"] == ["screen:low_quality"]
    assert sum(q["state"] == "promoted" for q in queries.values()) == 12
    release = demo / "releases" / "1.0.0"
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["kind"] == "judge_task" and manifest["counts"]["tasks"] == 12
    assert manifest["query_curation"] == {
        "candidates": 15,
        "states": {"dropped": 2, "held": 1, "promoted": 12},
        "reasons": {"duplicate:query": 1, "screen:low_quality": 1, "screen:nsfw": 1},
        "draws": [],  # the demo imports its candidates whole
    }  # why each candidate query is not in the benchmark
    paths = {f["path"] for f in manifest["files"]}
    assert {"data/checklists.jsonl", "report.json", "README.md", "croissant.json"} <= paths
    assert any(p.endswith(".mp4") for p in paths)
    people = {
        json.loads(line)["annotator"]
        for line in (release / "data" / "score_annotations.jsonl").read_text().splitlines()
    }
    assert people == {"annotator-1", "annotator-2", "annotator-3"}  # pseudonymous, three per sample
    checklists = json.loads(invoke("-w", str(demo), "judge", "checklists", "--json").stdout)
    assert (
        checklists["adjudication_queue"] == [] and checklists["agreement"]["disagreements"] == 4
    )  # 2 tasks x (one kept, one dropped)
    assert {t["state"] for t in checklists["tasks"]} == {"final"}
    for task in checklists["tasks"]:
        per_rubric = Counter(e["rubric"] for e in task["entries"])
        assert len(per_rubric) == 6 and all(1 <= n <= 6 for n in per_rubric.values()), task["id"]
        assert task["per_rubric"] == {r: per_rubric[r] for r in RUBRICS}
    assert {len(t["entries"]) for t in checklists["tasks"]} == {10, 11}, "more than six entries per task"


def test_demo_twice_changes_nothing(demo: Path) -> None:
    before = (demo / "releases" / "1.0.0" / "manifest.json").read_bytes()
    result = invoke("demo", str(demo), "--kind", "judge")
    assert result.exit_code == 0
    said = " ".join(result.output.split())  # rich wraps long lines
    assert "0 drafted, 12 from the cache" in said and "33 files, unchanged" in said  # claims.json, 2 Parquet
    assert (demo / "releases" / "1.0.0" / "manifest.json").read_bytes() == before


def test_bad_judge_outputs_name_file_and_line(demo: Path, tmp_path: Path) -> None:
    bad = tmp_path / "judges.jsonl"
    bad.write_text(
        json.dumps({"sample": "nope", "judge": "j", "scores": {"overall": [3]}})
        + "\n"
        + json.dumps({"sample": "s:t2t-01:sys-a", "judge": "j", "scores": {"overall": [9]}})
        + "\n"
    )
    result = invoke("-w", str(demo), "judge", "import", "outputs", str(bad))
    assert result.exit_code == 2
    assert f"{bad}:1: sample: unknown sample 'nope'" in result.output
    assert f"{bad}:2: scores.overall.0" in result.output


def test_status_and_funnel_show_the_kinds_stages(demo: Path, tmp_path: Path) -> None:
    rows = json.loads(invoke("-w", str(demo), "status", "--json").stdout)
    judged = [r for r in rows if r["kind"] == "judge_task"]
    assert len(judged) == 12 and {r["state"] for r in judged} == {"admitted"}
    assert set(judged[0]) == {"id", "group", "kind", "state", "stage", "reasons"}
    funnel = json.loads(invoke("-w", str(demo), "funnel", "--json").stdout)
    assert {"checklist_curation", "checklist_crosscheck", "response_review"} <= set(funnel["stages"])
    record = {"task": "t2t-01", "stage": "checklist_curation", "reviewer": "ann1", "selected": []}
    path = tmp_path / "reviews.jsonl"
    path.write_text(json.dumps(record) + "\n")
    result = invoke("-w", str(demo), "import", "reviews", str(path))
    assert result.exit_code == 2 and "curate judge import records" in result.output


def test_the_kind_is_registered() -> None:
    from curation.kinds import kind_of, stage_named

    kind = kind_of("judge_task")
    assert kind.stage_names == ("checklist_curation", "checklist_crosscheck", "response_review")
    assert kind.modalities == ("text", "image", "audio", "video") and not kind.has_answer
    assert stage_named("response_review") is kind.stages[2]
