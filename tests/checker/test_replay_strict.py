"""Issue 40 for the probe replay format (design.md, "Recorded probe output"), through `curate check` on SQLite
and PostgreSQL: probabilities are strict numbers in [0, 1] that sum to 1 (within 0.001), answers and options are
the item's own, unknown fields are refused; every problem is FILE:LINE, all of them; a refused run stores
nothing (no gate result, no cached probe output)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from typer.testing import CliRunner

from checker.backends.replay import PROBABILITY_TOLERANCE, ReplayBackend
from checker.tables import ProbeResult
from checker.views import PROBE_VIEWS
from curation.errors import ValidationFailed
from curation.items import import_items
from curation.tables import GateResult
from curation.workspace import Workspace
from devsupport.media_factory import write_items
from omnicurate.cli.main import app
from tests.exports.workspace_factory import group_rows
from tests.hostile_records import assert_named_refusal, encode, junk_lines, mutated, write_lines

runner = CliRunner()
FULL = "text+image+audio"


@pytest.fixture
def probe_ws(workspace: Workspace, tmp_path: Path) -> Workspace:
    """Two items, g1-a and g1-b, with options A to D."""
    workspace.add_person("ann1", ["author"])
    import_items(workspace, write_items(tmp_path / "items", group_rows("g1")))
    return workspace


def check(ws: Workspace, replay: Path):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["-w", str(ws.root), "check", "--probe", f"replay:{replay}", "--json"])


def stored(ws: Workspace) -> tuple[int, int]:
    with ws.session() as s:
        gates = s.execute(select(func.count()).select_from(GateResult)).scalar_one()
        cached = s.execute(select(func.count()).select_from(ProbeResult)).scalar_one()
    return gates, cached


def line(item: str, view: str, **body: object) -> bytes:
    return encode({"item": item, "view": view, **body})


def valid_lines() -> list[bytes]:
    return [
        line("g1-a", FULL, probs={"A": 0.9, "B": 0.1}),
        line("g1-b", FULL, samples=["B"] * 9 + ["<unparseable>"]),
        line("g1-a", "text", probs={"A": 0.25, "B": 0.25, "C": 0.25, "D": 0.2505}),  # within the tolerance
    ]


def test_hostile_lines_are_each_named_and_nothing_is_stored(probe_ws: Workspace, tmp_path: Path) -> None:
    hostile = [
        line("g1-a", "image", probs={"A": True, "B": 0.0}),  # 4: a bool is not a probability
        line("g1-a", "audio", probs={"A": 1, "B": 1, "C": 1}),  # 5: sums to 3
        line("g1-a", "none", probs={"A": "0.5", "B": 0.5}),  # 6: a string is not a number
        line("g1-a", "text+image", samples=["A", "?"]),  # 7: not an option letter
        line("g1-a", "text+audio", samples=["A"], confidence=0.9),  # 8: unknown field
        b'{"item": "g1-a", "view": "image+audio", "probs": {"A": NaN, "B": 0.5}}',  # 9: NaN
        line("g1-b", "text", probs={"A": 1.5, "B": -0.5}),  # 10: out of [0, 1]
        line("g1-b", "image", probs={"A": 0.5, "B": 0.5}, samples=["A"]),  # 11: both forms
        line("g1-b", "smell", samples=["A"]),  # 12: unknown view
        line("g1-a", FULL, probs={"A": 1.0}),  # 13: given twice
        line("g1-b", "audio", probs={"Z": 1.0}),  # 14: not an option letter
    ]
    replay = write_lines(tmp_path / "run.jsonl", valid_lines() + hostile)
    result = check(probe_ws, replay)
    assert result.exit_code == 2, result.output
    assert_named_refusal(result.stderr, replay, 14)
    expected = {
        4: "probs.A: Input should be a valid number",
        5: "probs: the probabilities sum to 3; they must sum to 1 (within 0.001)",
        6: "probs.A: Input should be a valid number",
        7: 'samples: an answer is an option letter (A to H), or "<unparseable>" for one that named none; answer 2 is "?"',
        8: "confidence: unknown field",
        10: "probs.A: Input should be less than or equal to 1",
        11: 'give either "samples" or "probs", not both or neither',
        12: 'view: unknown view "smell"',
        13: "view: item g1-a, view text+image+audio is given twice (first on line 1)",
        14: 'probs: "Z" is not an option letter (A to H)',
    }
    for number, problem in expected.items():
        assert f"{replay}:{number}: {problem}" in result.stderr, result.stderr
    assert f"{replay}:9: probs.A:" in result.stderr and f"{replay}:10: probs.B:" in result.stderr
    assert not any(f"{replay}:{n}:" in result.stderr for n in (1, 2, 3)), "the valid lines are not named"
    assert stored(probe_ws) == (0, 0)


def test_options_must_be_the_items_own_and_nothing_is_stored(probe_ws: Workspace, tmp_path: Path) -> None:
    """Options E and H are option letters, but not options of a four-option item: every such line is named."""
    hostile = [
        line("g1-a", "image", probs={"A": 0.5, "E": 0.5}),
        line("g1-b", "audio", samples=["A", "H", "H", "B"]),
    ]
    replay = write_lines(tmp_path / "run.jsonl", valid_lines() + hostile)
    result = check(probe_ws, replay)
    assert result.exit_code == 2, result.output
    assert_named_refusal(result.stderr, replay, 5)
    assert f"{replay}:4: probs.E: option E is not an option of the item; item g1-a's options are A, B, C, D" in (
        result.stderr
    )
    assert f"{replay}:5: samples.1: answer H (2 times) is not an option of the item; item g1-b's options are" in (
        result.stderr
    )
    assert stored(probe_ws) == (0, 0)

    clean = write_lines(tmp_path / "clean.jsonl", valid_lines())
    done = check(probe_ws, clean)
    assert done.exit_code == 0, done.output
    assert {r["item"]: r["verdict"] for r in json.loads(done.stdout)["items"]} == {
        "g1-a": "well_posed",
        "g1-b": "well_posed",
    }
    assert stored(probe_ws) == (2, 3)  # two gate results; g1-a's two views and g1-b's one, cached


def test_the_tolerance_is_the_documented_one() -> None:
    assert PROBABILITY_TOLERANCE == 1e-3
    manual = (Path(__file__).parents[2] / "docs" / "reference" / "formats.md").read_text(encoding="utf-8")
    assert "sum to 1 (within 0.001)" in manual


def test_a_recorded_run_with_unparseable_answers_and_routes_replays(tmp_path: Path) -> None:
    """What `curate check --record` and a release's admission record write is read back as it is."""
    recorded = [
        {"item": "x-1", "view": FULL, "samples": ["A", "<unparseable>"], "audio_route": "native"},
        {"item": "x-1", "view": "text", "probs": {"A": 0.333333, "B": 0.333333, "C": 0.333334}, "audio_route": "mixed"},
    ]
    backend = ReplayBackend(str(write_lines(tmp_path / "r.jsonl", [encode(r) for r in recorded])))
    assert backend.lines[("x-1", FULL)]["audio_route"] == "native" and "audio_route" in backend.lines[("x-1", "text")]
    with pytest.raises(ValidationFailed, match=r"r2.jsonl:1: audio_route: Input should be"):
        ReplayBackend(str(write_lines(tmp_path / "r2.jsonl", [encode({**recorded[0], "audio_route": "loud"})])))


BASE = {"item": "g1-a", "view": "text", "probs": {"A": 0.5, "B": 0.5}}
PATHS = [("item",), ("view",), ("probs",), ("probs", "A"), ("probs", "B"), ("samples",), ("audio_route",)]
hostile_line = st.one_of(
    mutated(BASE, PATHS).map(encode),
    mutated(BASE, PATHS).map(lambda record: encode(record, ascii_only=False)),
    mutated({"item": "g1-b", "view": "image", "samples": ["B", "A"]}, [*PATHS, ("samples", "0")]).map(encode),
    st.builds(
        lambda item, view, samples: line(item, view, samples=samples),
        st.sampled_from(["g1-a", "g1-b", "other"]),
        st.sampled_from([*PROBE_VIEWS, "sideways"]),
        st.lists(st.sampled_from(["A", "B", "E", "H", "<unparseable>", "a", "?", ""]), max_size=4),
    ),
    junk_lines,
)
plausible_line = st.builds(
    lambda item, view, samples: line(item, view, samples=samples),
    st.sampled_from(["g1-a", "g1-b", "other"]),
    st.sampled_from(["none", "image", "audio", "text+image"]),
    st.lists(st.sampled_from(["A", "B", "D", "<unparseable>"]), min_size=1, max_size=5),
)
"""Lines that are valid unless they repeat an item and view: some files are clean and get replayed."""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(hostile_line, plausible_line, plausible_line), min_size=1, max_size=3))
def test_hostile_replay_lines_are_refused_by_name_or_replayed(
    probe_ws: Workspace, tmp_path: Path, lines: list[bytes]
) -> None:
    """Property: a replay file with generated hostile lines after valid ones is either replayed (exit 0) or refused
    with every problem as FILE:LINE (exit 2) and nothing stored; never a traceback."""
    before = stored(probe_ws)
    replay = write_lines(tmp_path / "hostile.jsonl", [*valid_lines(), *lines])
    result = check(probe_ws, replay)
    event(f"exit {result.exit_code}")
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        assert_named_refusal(result.stderr, replay, 3 + len(lines))
        assert stored(probe_ws) == before
    else:
        json.loads(result.stdout)
