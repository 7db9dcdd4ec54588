import json

import pytest
from typer.testing import CliRunner

from omnicurate.cli.main import app

runner = CliRunner()


@pytest.fixture
def example_csv(tmp_path, krippendorff_2011_table, write_long_csv):
    path = tmp_path / "k2011.csv"
    write_long_csv(path, krippendorff_2011_table)
    return path


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_prints_the_published_value_to_three_decimals(example_csv, krippendorff_2011_alpha, level):
    result = runner.invoke(app, ["stats", "alpha", str(example_csv), "--level", level])
    assert result.exit_code == 0, result.output
    assert f"Krippendorff's alpha ({level}): {krippendorff_2011_alpha[level]:.3f}" in result.stdout
    assert "units: 11, coders: 4, ratings: 41" in result.stdout


def test_alpha_json_shape_with_bootstrap(example_csv):
    result = runner.invoke(
        app,
        [
            "stats",
            "alpha",
            str(example_csv),
            "--level",
            "interval",
            "--bootstrap",
            "200",
            "--seed",
            "3",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["statistic"] == "krippendorff_alpha"
    assert document["level"] == "interval"
    assert round(document["value"], 3) == 0.849
    assert document["units"] == 11
    ci = document["ci"]
    assert set(ci) == {"low", "high", "confidence", "resamples", "seed", "by", "undefined_resamples"}
    assert ci["resamples"] == 200 and ci["seed"] == 3 and ci["by"] == "unit"
    assert ci["low"] <= document["value"] <= ci["high"]


def test_kappa_reports_raw_agreement(tmp_path):
    path = tmp_path / "two.csv"
    rows = ["unit,coder,value"] + [
        f"u{i},A,{a}\nu{i},B,{b}" for i, (a, b) in enumerate([(1, 1), (2, 2), (1, 2), (2, 2)])
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["stats", "kappa", str(path), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["weights"] == "none"
    assert document["raw_agreement"] == pytest.approx(0.75)
    assert round(document["value"], 3) == 0.5
    text = runner.invoke(app, ["stats", "kappa", str(path), "--weights", "quadratic"])
    assert "Cohen's kappa (quadratic weights): 0.500" in text.stdout


def test_kappa_with_four_coders_is_bad_input_exit_2_naming_the_statistics_that_fit(example_csv):
    for args in ([], ["--json"]):
        result = runner.invoke(app, ["stats", "kappa", str(example_csv), *args])
        assert result.exit_code == 2, result.output
        assert "exactly two coders; the ratings have 4" in result.output
        assert "curate stats fleiss" in result.output
        assert result.stdout == ""


def test_fleiss_on_unequal_ratings_exits_1(example_csv):
    result = runner.invoke(app, ["stats", "fleiss", str(example_csv)])
    assert result.exit_code == 1
    assert "alpha --level nominal" in result.output


def test_fleiss_text_output(tmp_path):
    path = tmp_path / "f.jsonl"
    votes = {"s1": [1, 1, 2], "s2": [2, 2, 2], "s3": [1, 3, 3], "s4": [3, 3, 3]}
    path.write_text(
        "".join(
            json.dumps({"unit": s, "coder": f"r{k}", "value": v}) + "\n"
            for s, vs in votes.items()
            for k, v in enumerate(vs)
        ),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["stats", "fleiss", str(path), "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Fleiss' kappa: 0.")
    assert "50 resamples by unit, seed 0" in result.stdout


def test_undefined_statistic_exits_1_with_no_nan(tmp_path):
    path = tmp_path / "same.csv"
    path.write_text("unit,coder,value\nu1,A,4\nu1,B,4\nu2,A,4\nu2,B,4\n", encoding="utf-8")
    result = runner.invoke(app, ["stats", "alpha", str(path), "--level", "ordinal"])
    assert result.exit_code == 1
    assert "no variation" in result.output
    assert "nan" not in result.output.lower()


def test_bad_input_exits_2_with_file_and_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("unit,coder,value\nu1,A,1\nu1,A,2\n", encoding="utf-8")
    result = runner.invoke(app, ["stats", "alpha", str(path)])
    assert result.exit_code == 2
    assert f"{path}:3: value: coder 'A' already rated unit 'u1' on line 2" in result.output


def test_unknown_level_exits_2(example_csv):
    result = runner.invoke(app, ["stats", "alpha", str(example_csv), "--level", "cardinal"])
    assert result.exit_code == 2
    assert "unknown level 'cardinal'" in result.output


@pytest.mark.parametrize(
    ("command", "statistic", "reason"),
    [
        (["alpha", "--level", "ordinal"], "krippendorff_alpha", "no variation"),
        (["kappa"], "cohen_kappa", "same single category"),
        (["kappa", "--weights", "linear"], "cohen_kappa", "same single category"),
        (["fleiss"], "fleiss_kappa", "every rating is in one category"),
    ],
)
def test_json_prints_one_document_also_when_the_statistic_is_undefined(tmp_path, command, statistic, reason):
    path = tmp_path / "same.csv"
    path.write_text("unit,coder,value\nu1,A,4\nu1,B,4\nu2,A,4\nu2,B,4\n", encoding="utf-8")
    result = runner.invoke(app, ["stats", command[0], str(path), *command[1:], "--json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["statistic"] == statistic
    assert document["value"] is None
    assert reason in document["undefined"]


@pytest.mark.parametrize(
    ("command", "needs"),
    [
        (["kappa", "--weights", "linear"], "weighted kappa needs an ordered numeric scale"),
        (["alpha", "--level", "interval"], "the interval level needs numbers"),
    ],
)
def test_a_text_value_in_numeric_statistics_is_named_with_file_and_line(tmp_path, command, needs):
    path = tmp_path / "mixed.csv"
    path.write_text("unit,coder,value\nu1,A,1\nu1,B,2\nu2,A,lots\nu2,B,3\n", encoding="utf-8")
    result = runner.invoke(app, ["stats", command[0], str(path), *command[1:], "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert f"{path}:4: value: 'lots' is not a number; {needs}" in result.stderr
