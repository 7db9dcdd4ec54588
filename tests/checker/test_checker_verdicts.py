"""Verdict logic end to end on replay data: every verdict, modal option, warnings, the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from probe_fixtures import make_item

from checker.backends import open_backend
from checker.estimators import EstimatorConfig
from checker.run import run_check
from checker.verdicts import judge_sets, summarize, verdict_kappa
from checker.views import PROBE_VIEWS
from curation.errors import NotFoundError, ValidationFailed

WIDE = ["A", "B", "A", "C", "B"]  # three options consistent at K = 5, τ = 0.2


def write_replay(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def replay_lines(item: str, full: dict, overrides: dict[str, dict] | None = None) -> list[dict]:
    lines = []
    for view in PROBE_VIEWS:
        body = (overrides or {}).get(view) or ({"samples": WIDE} if view != "text+image+audio" else full)
        lines.append({"item": item, "view": view, **body})
    return lines


CASES = {
    "well": replay_lines("well", {"samples": ["A"] * 10}),
    "mismatch": replay_lines("mismatch", {"samples": ["B"] * 9 + ["C"]}),
    "under": replay_lines("under", {"probs": {"A": 0.6, "B": 0.4, "C": 0.0, "D": 0.0}}),
    "reduced": replay_lines(
        "reduced",
        {"samples": ["A"] * 10},
        {"text+audio": {"samples": ["A"] * 5}, "image": {"samples": ["A", "A", "A", "A", "<unparseable>"]}},
    ),
    "prior": replay_lines("prior", {"samples": ["A"] * 10}, {"none": {"samples": ["B"] * 5}}),
}


@pytest.fixture
def results(tmp_path: Path, media_dir: Path):  # type: ignore[no-untyped-def]
    lines = [line for case in CASES.values() for line in case]
    backend = open_backend(f"replay:{write_replay(tmp_path / 'r.jsonl', lines)}")
    items = [make_item(media_dir, item_id=name, answer="A") for name in CASES]
    out, stats = run_check(items, backend, EstimatorConfig())
    assert stats.views_probed == 8 * len(CASES) and stats.views_cached == 0
    return {r.item: r for r in out}


def test_every_verdict(results) -> None:  # type: ignore[no-untyped-def]
    assert results["well"].verdict == "well_posed" and results["well"].reducible_by == []
    assert results["mismatch"].verdict == "label_mismatch" and results["mismatch"].modal_full == "B"
    assert results["under"].verdict == "underdetermined"
    assert results["under"].views["text+image+audio"].probs == {"A": 0.6, "B": 0.4, "C": 0.0, "D": 0.0}
    assert results["reduced"].verdict == "reducible"
    assert results["reduced"].reducible_by == ["image", "text+audio"]
    assert "not_enlarging:image" in results["reduced"].warnings


def test_option_prior_warning_from_the_none_view(results) -> None:  # type: ignore[no-untyped-def]
    assert "option_prior:B" in results["prior"].warnings
    assert not any(w.startswith("option_prior") for w in results["well"].warnings)


def test_json_shape_matches_design(results) -> None:  # type: ignore[no-untyped-def]
    record = results["under"].to_json()
    assert set(record) >= {"item", "verdict", "reducible_by", "views"}
    assert list(record["views"]) == list(PROBE_VIEWS)
    assert record["views"]["text+image+audio"]["consistent"] == ["A", "B"]
    assert "probs" in record["views"]["text+image+audio"] and "counts" in record["views"]["text"]
    assert record["modal_full"] == "A" and record["modal_matches_label"] is True


def test_verdict_order_label_mismatch_before_underdetermined() -> None:
    sets = {"text+image+audio": ["B", "C"], **{v: ["A", "B"] for v in PROBE_VIEWS if v != "text+image+audio"}}
    assert judge_sets("A", sets).verdict == "label_mismatch"
    sets["text+image+audio"] = ["A", "C"]
    sets["text"] = ["A"]
    assert judge_sets("A", sets).verdict == "underdetermined"  # before reducible
    sets["text+image+audio"] = []
    judgement = judge_sets("A", sets)
    assert judgement.verdict == "label_mismatch" and "empty_view:text+image+audio" in judgement.warnings


def test_summary_shares_and_kappa(results) -> None:  # type: ignore[no-untyped-def]
    human = {
        "well": {v: ["A", "B"] for v in PROBE_VIEWS if v not in ("none", "text+image+audio")},
        "reduced": {v: ["A", "B"] for v in PROBE_VIEWS if v not in ("none", "text+image+audio")},
    }
    human["well"]["text+image+audio"] = ["A"]
    human["reduced"]["text+image+audio"] = ["A"]
    summary = summarize(list(results.values()), human)
    assert summary["items"] == 5
    assert summary["verdicts"] == {"label_mismatch": 1, "underdetermined": 1, "reducible": 1, "well_posed": 2}
    assert summary["reducible_share"]["image"] == pytest.approx(0.2)
    assert summary["reducible_share"]["text"] == 0.0
    agreement = summary["human_agreement"]
    assert agreement["items"] == 2
    assert agreement["disagreements"] == [{"item": "reduced", "probe": "reducible", "human": "well_posed"}]
    assert agreement["kappa"] == pytest.approx(0.0)


def test_kappa_values_and_undefined_cases() -> None:
    assert verdict_kappa([("i1", "reducible", "reducible"), ("i2", "well_posed", "well_posed")])[0] == pytest.approx(
        1.0
    )
    assert verdict_kappa([("i1", "reducible", "well_posed"), ("i2", "well_posed", "reducible")])[0] == pytest.approx(
        -1.0
    )
    kappa, why = verdict_kappa([("i1", "well_posed", "well_posed"), ("i2", "well_posed", "well_posed")])
    assert kappa is None and "chance agreement is 1" in why
    summary = summarize([], {})
    assert summary["human_agreement"]["kappa"] is None and "checklist" in summary["human_agreement"]["why_undefined"]


def test_replay_file_problems_are_reported_with_lines(tmp_path: Path) -> None:
    path = write_replay(
        tmp_path / "bad.jsonl",
        [
            {"item": "x", "view": "sideways", "samples": ["A"]},
            {"item": "x", "view": "text", "samples": ["A"], "probs": {"A": 1}},
            {"item": "x", "view": "audio", "probs": {"A": 1.5}},
        ],
    )
    with pytest.raises(ValidationFailed) as info:
        open_backend(f"replay:{path}")
    lines = sorted(p.line for p in info.value.problems)
    assert lines == [1, 2, 3]


def test_replay_missing_full_view_is_a_clear_error(tmp_path: Path, media_dir: Path) -> None:
    """Other views may be missing (judged unprobed); the full view may not: it decides the label's fate."""
    path = write_replay(tmp_path / "r.jsonl", [{"item": "it-1", "view": "text", "samples": ["A"]}])
    with pytest.raises(NotFoundError, match=r"it-1.*text\+image\+audio.*at least its full view \(it has text\)"):
        run_check([make_item(media_dir)], open_backend(f"replay:{path}"), EstimatorConfig())
