"""`curate judge report` on the judge demo's workspace (issue 46, row 4): per-judge first / second / tie rates
beside the people's, rubric-versus-overall correlation maps in `--json` at full precision, and `--plots DIR`
writing the heat maps and the choice-rate bars."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from omnicurate.cli.main import app
from tests.conftest import DemoTemplates

runner = CliRunner()


@pytest.fixture
def judge_demo(tmp_path: Path, demo_templates: DemoTemplates) -> Iterator[Path]:
    """A copy of the judge demo of this test's own."""
    ws = demo_templates.copy("judge", tmp_path / "demo")
    yield ws.root
    demo_templates.discard(ws)


def test_choice_rates_and_rubric_maps_of_people_and_judges(judge_demo: Path, tmp_path: Path) -> None:
    plots = tmp_path / "plots"
    done = runner.invoke(
        app, ["-w", str(judge_demo), "judge", "report", "--bootstrap", "0", "--plots", str(plots), "--json"]
    )
    assert done.exit_code == 0, done.output
    pairs = json.loads(done.stdout)["pairs"]
    rates = pairs["choice_rates"]
    assert set(rates) == {"human", *pairs["judges"], "fusion"}
    human = rates["human"]["all"]["overall"]
    counted = pairs["human_choices"]["overall"]  # the people's majority choices, counted by the report's own code
    assert human["n"] == sum(counted.values()) == pairs["samples"]
    assert {c: human[c] for c in ("first", "second", "tie")} == {c: counted[c] / human["n"] for c in counted}
    for source, entry in rates.items():
        cell = entry["all"]["overall"]
        assert cell["first"] + cell["second"] + cell["tie"] == pytest.approx(1.0), source

    for kind in ("pairs", "scores"):
        maps = json.loads(done.stdout)[kind]["correlation_maps"]
        assert "human" in maps and set(maps) <= {"human", *pairs["judges"]}
        for source, found in maps.items():
            r = found["pearson"]
            assert found["criteria"][0] == "overall" and len(r) == len(found["criteria"]) == 7, source
            assert all(r[i][i] == pytest.approx(1.0) for i in range(7))
            assert all(r[i][j] == r[j][i] for i in range(7) for j in range(7)), "symmetric"
    written = sorted(p.name for p in plots.iterdir())
    assert written == ["pair_choice_rates.png", "pairs_rubric_correlation.png", "scores_rubric_correlation.png"]
    with Image.open(plots / "pairs_rubric_correlation.png") as image:
        assert image.format == "PNG"
    assert "wrote " in done.stderr

    table = runner.invoke(app, ["-w", str(judge_demo), "judge", "report", "--bootstrap", "0"])
    assert "Overall choice rates (pairs; Table 6)" in table.stdout
    assert f"{human['first']:.1%}" in table.stdout
