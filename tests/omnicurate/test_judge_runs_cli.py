"""`curate judge respond` and `curate judge run` through replay backends on the judge demo's workspace:
systems answer the tasks they accept, judges judge pairs in both orders with three samples each, invalid
answers are recorded as invalid, a rerun is a cache hit, and the report's position and run-to-run
consistency match figures worked out by hand."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from curation.kinds.judge import sample_store, task_store
from curation.kinds.judge.responding import response_provenance
from curation.kinds.judge.rubrics import CRITERIA
from curation.kinds.judge.tables import JudgeOutput
from curation.workspace import Workspace
from omnicurate.cli.main import app
from tests.conftest import DemoTemplates

runner = CliRunner()


def curate(root: Path, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(root), *args], catch_exceptions=False)


@pytest.fixture
def demo(tmp_path: Path, demo_templates: DemoTemplates) -> Iterator[Path]:
    """A copy of the judge demo of this test's own (every test here writes to it)."""
    ws = demo_templates.copy("judge", tmp_path / "ws")
    yield ws.root
    demo_templates.discard(ws)


def replay(path: Path, lines: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"key": k, "output": v, "model": "m-1"}) + "\n" for k, v in lines.items()))
    return path


def choice(value: int) -> str:
    return json.dumps({"overall": {"comment": "Both answer; the first is sharper.", "choice": value}})


def test_a_system_answers_the_tasks_it_accepts(demo: Path, tmp_path: Path) -> None:
    answers = {t: f"An answer to {t}." for t in ("t2t-01", "t2t-02", "i2t-01", "i2t-02")}
    backend = f"replay:{replay(tmp_path / 'sys-d.jsonl', answers)}"
    args = ["judge", "respond", "--system", "sys-d", "--backend", backend, "--accepts", "text,image"]
    done = curate(demo, *args, "--temperature", "0.2", "--seed", "7", "--json")
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert sorted(result["answered"]) == sorted(answers) and len(result["not_accepted"]) == 8
    ws = Workspace.open(demo)
    responses = {r.id: r for r in task_store.responses(ws)}
    assert responses["i2t-01:sys-d"].text == "An answer to i2t-01."
    made = response_provenance(ws, "i2t-01:sys-d")
    assert made is not None and made["params"] == {"temperature": 0.2, "seed": 7}
    assert made["model"].startswith("m-1@replay:sys-d.jsonl@") and len(made["prompt_sha256"]) == 64
    ws.close()
    again = json.loads(curate(demo, *args, "--json").stdout)
    assert again["answered"] == [] and sorted(again["already"]) == sorted(answers), "a rerun adds nothing"
    unknown = curate(demo, "judge", "respond", "--system", "x", "--backend", backend, "--accepts", "text,smell")
    assert unknown.exit_code == 2 and "not smell" in unknown.stderr


def test_pairs_in_both_orders_invalid_answers_and_consistency_by_hand(demo: Path, tmp_path: Path) -> None:
    ws = Workspace.open(demo)
    pairs = [s.id for s in sample_store.samples(ws, "pair")]
    ws.close()
    assert len(pairs) == 22
    first = pairs[0]

    def lines(run: int) -> dict[str, str]:
        out = {}
        for sample in pairs:
            for i in range(3):
                shown = 2 if (run == 2 and sample == first) else 0
                out[f"{sample}|overall|shown|{run}|{i}"] = choice(shown)
                if sample == first:  # the swapped order agrees: the same response wins
                    swapped = choice(0 if run == 2 else 2)
                else:  # sample i=0 disagrees (the first side wins again), i=1 agrees, i=2 is no JSON
                    swapped = [choice(0), choice(2), "I prefer the first one."][i]
                out[f"{sample}|overall|swapped|{run}|{i}"] = swapped
        return out

    for run in (1, 2):
        backend = f"replay:{replay(tmp_path / f'judge-{run}.jsonl', lines(run))}"
        args = ["judge", "run", "--judge", "J", "--backend", backend, "--setting", "overall", "--kind", "pair"]
        done = curate(demo, *args, "--run", str(run), "--json")
        assert done.exit_code == 0, done.output
        assert json.loads(done.stdout) == {
            "judge": "J/overall", "run": run, "judged": 22, "cached": 0, "invalid": 21, "answers": 132
        }  # fmt: skip
        assert json.loads(curate(demo, *args, "--run", str(run), "--json").stdout)["cached"] == 22, "cache hit"

    ws = Workspace.open(demo)
    with ws.session() as s:
        row = s.execute(select(JudgeOutput).where(JudgeOutput.sample == pairs[1], JudgeOutput.judge == "J/overall"))
        payload = row.scalar_one().payload
    ws.close()
    answers = payload["runs"]["1"]["answers"]
    assert answers["shown"]["overall"] == ["first"] * 3
    assert answers["swapped"]["overall"] == ["second", "first", None], "mapped back to the sample's sides"
    assert payload["runs"]["1"]["raw"]["swapped"][2] == "I prefer the first one.", "kept, never repaired"
    assert payload["choices"] == {"overall": ["first", "first", "first", "second", "first"]}, "run 1, valid only"

    report = json.loads(curate(demo, "judge", "report", "--json", "--bootstrap", "0").stdout)
    figures = report["consistency"]["J/overall"]
    # by hand, per run: the first sample's 3 samples agree in both orders; each of the other 21 has one agreeing
    # and one disagreeing valid pair (the third is invalid): 3 + 21 agree of 3 + 42; two runs alike: 48 of 90
    assert figures["position"] == {"pairs": 90, "value": pytest.approx(48 / 90)}
    # runs 1 and 2 agree on 21 samples; on the first, run 1 says first and run 2 second (share 1/2)
    assert figures["runs"] == {"units": 22, "value": pytest.approx((21 + 0.5) / 22)}
    assert "J/overall" in report["pairs"]["metrics"]


def test_scores_in_the_checklist_setting_parse_strictly(demo: Path, tmp_path: Path) -> None:
    ws = Workspace.open(demo)
    scores = [s.id for s in sample_store.samples(ws, "score")]
    ws.close()
    good = json.dumps({c: {"comment": "Fine.", "score": 4} for c in CRITERIA})
    bad = json.dumps({**{c: {"comment": "Fine.", "score": 4} for c in CRITERIA}, "clarity": {"score": 4}})
    lines = {
        f"{s}|checklist|shown|1|{i}": (bad if (s == scores[0] and i == 0) else good) for s in scores for i in range(3)
    }
    backend = f"replay:{replay(tmp_path / 'scores.jsonl', lines)}"
    done = curate(demo, "judge", "run", "--judge", "K", "--backend", backend, "--kind", "score", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["invalid"] == 1, "a comment-less clarity answer is invalid"
    ws = Workspace.open(demo)
    with ws.session() as s:
        payload = s.execute(
            select(JudgeOutput.payload).where(JudgeOutput.sample == scores[0], JudgeOutput.judge == "K/checklist")
        ).scalar_one()
    ws.close()
    assert payload["runs"]["1"]["answers"]["shown"]["clarity"] == [None, 4, 4]
    assert payload["scores"]["clarity"] == [4, 4] and payload["scores"]["overall"] == [4, 4, 4]
    missing = curate(demo, "judge", "run", "--judge", "K", "--backend", backend, "--kind", "pair")
    assert missing.exit_code != 0 and "has no answer for" in missing.stderr
