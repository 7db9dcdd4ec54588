import json

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from curation.agreement import UndefinedStatistic
from curation.agreement.judge import read_judge_file
from curation.errors import ValidationFailed
from omnicurate.cli.main import app

runner = CliRunner()


@pytest.fixture
def scores_csv(tmp_path):
    rng = np.random.default_rng(0)
    lines = ["system,item,criterion,human,judge"]
    for s, quality in zip("PQRST", [1.5, 2.5, 3.0, 4.0, 4.5], strict=True):
        for i in range(4):
            for criterion in ("relevance", "clarity"):
                human = int(np.clip(round(quality + rng.normal(0, 0.6)), 1, 5))
                judge = int(np.clip(round(quality + rng.normal(0, 0.9)), 1, 5))
                lines.append(f"{s},i{i},{criterion},{human},{judge}")
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_judge_scores_json_matches_scipy(scores_csv):
    result = runner.invoke(app, ["stats", "judge", str(scores_csv), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["kind"] == "scores"
    assert set(document["criteria"]) == {"relevance", "clarity", "all"}
    kind, rows = read_judge_file(scores_csv)
    clarity = [r for r in rows if r.criterion == "clarity"]
    systems = sorted({r.system for r in clarity})
    human = [np.mean([r.human for r in clarity if r.system == s]) for s in systems]
    judge = [np.mean([r.judge for r in clarity if r.system == s]) for s in systems]
    got = document["criteria"]["clarity"]
    assert got["spearman"]["value"] == pytest.approx(stats.spearmanr(human, judge).statistic)
    assert got["kendall_tau_b"]["p_value"] == pytest.approx(stats.kendalltau(human, judge).pvalue)
    assert got["systems"] == 5 and got["rows"] == 20


def test_judge_scores_text_has_three_decimals(scores_csv):
    result = runner.invoke(app, ["stats", "judge", str(scores_csv)])
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("clarity: Spearman rho ")
    assert "over 20 scores of 5 systems" in first


def test_judge_pairs_report_accuracy_elo_and_bradley_terry(tmp_path):
    rows = [
        ("x", "y", "A", "A"),
        ("x", "y", "B", "A"),
        ("y", "z", "A", "A"),
        ("z", "x", "A", "tie"),
        ("y", "z", "tie", "tie"),
        ("z", "y", "A", "B"),
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        "".join(
            json.dumps({"item": f"i{k}", "a": a, "b": b, "human": h, "judge": j}) + "\n"
            for k, (a, b, h, j) in enumerate(rows)
        ),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["stats", "judge", str(path), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["accuracy"]["with_ties"] == pytest.approx(3 / 6)
    assert document["accuracy"]["without_ties"] == pytest.approx(2 / 5)
    assert set(document["elo"]) == {"human", "judge"}
    assert sum(document["elo"]["human"].values()) == pytest.approx(3000.0)
    assert sum(document["bradley_terry"]["human"].values()) == pytest.approx(1.0)


def test_undefined_bradley_terry_exits_1_but_reports_the_rest(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("item,a,b,human\ni1,x,y,A\ni2,x,z,A\n", encoding="utf-8")
    result = runner.invoke(app, ["stats", "judge", str(path)])
    assert result.exit_code == 1
    assert "Elo (human, K=32): x 1031" in result.stdout
    assert "Bradley-Terry (human): undefined" in result.stdout


def test_judge_file_problems_are_located(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("system,item,human,judge\nP,i1,4,five\nQ,i1,,3\n", encoding="utf-8")
    with pytest.raises(ValidationFailed) as caught:
        read_judge_file(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:2: judge: 'five' is not a number",
        f"{path}:3: human: missing",
    ]
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("item,a,b,human\ni1,x,x,left\n", encoding="utf-8")
    with pytest.raises(ValidationFailed) as caught:
        read_judge_file(pairs)
    assert [str(p) for p in caught.value.problems] == [
        f"{pairs}:2: human: 'left' is not one of A, B, tie",
        f"{pairs}:2: b: system 'x' is compared with itself",
    ]


def test_an_empty_judge_file_is_undefined(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("item,a,b,human\n", encoding="utf-8")
    with pytest.raises(UndefinedStatistic, match="holds no rows"):
        read_judge_file(path)
