"""The study's statistics (App. F.5) against hand computations with scipy; windows; judge lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from curation.errors import ValidationFailed
from curation.jsonl import read_models
from curation.study.agreement import (
    Evaluation,
    JudgeScore,
    agreement,
    human_means,
    judge_means,
    system_table,
    window_vs_full,
)
from curation.study.lines import JudgeLine
from curation.study.release import StoryRelease, choose_window
from curation.study.rubric import CRITERIA

WINDOW = ["t1", "t2", "t3"]
SYSTEMS = ["a", "b", "c", "d"]


def four(m: int, c: int, k: int, g: int) -> dict[str, int]:
    return dict(zip(CRITERIA, (m, c, k, g), strict=True))


# Human evaluations in the text track: (transition, system, rater, scores). Designed so that system d has
# ratings only on t3 (leaving t3 out drops it) and the criteria rank the systems differently.
HUMAN = [
    ("t1", "a", "r1", four(2, 3, 2, 1)),
    ("t1", "a", "r2", four(3, 3, 3, 3)),
    ("t2", "a", "r1", four(4, 2, 2, 2)),
    ("t1", "b", "r1", four(5, 6, 5, 4)),
    ("t2", "b", "r2", four(6, 5, 6, 7)),
    ("t3", "b", "r1", four(4, 4, 4, 4)),
    ("t1", "c", "r2", four(8, 7, 9, 8)),
    ("t3", "c", "r1", four(7, 9, 8, 6)),
    ("t3", "d", "r2", four(9, 9, 10, 8)),
    ("t3", "d", "r1", four(6, 8, 7, 9)),
]
# Judges: j1 scores every system on t1, t2 and t4 (t4 lies outside the window); j2 fewer, with an invalid answer.
JUDGE = [
    ("j1", "t1", "a", four(3, 3, 3, 3)),
    ("j1", "t2", "a", four(5, 4, 4, 3)),
    ("j1", "t4", "a", four(2, 2, 2, 2)),
    ("j1", "t1", "b", four(6, 6, 5, 5)),
    ("j1", "t2", "b", four(4, 5, 6, 5)),
    ("j1", "t4", "b", four(7, 7, 7, 7)),
    ("j1", "t1", "c", four(7, 8, 8, 7)),
    ("j1", "t4", "c", four(6, 6, 6, 6)),
    ("j1", "t1", "d", four(8, 8, 9, 9)),
    ("j2", "t1", "a", four(4, 4, 4, 4)),
    ("j2", "t1", "b", four(5, 5, 5, 5)),
    ("j2", "t2", "b", None),
    ("j2", "t1", "c", four(9, 9, 9, 9)),
    ("j2", "t1", "d", four(6, 6, 6, 6)),
]


def evaluations(track: str = "text") -> list[Evaluation]:
    return [Evaluation(t, s, track, r, sc) for t, s, r, sc in HUMAN]


def judges(track: str = "text") -> list[JudgeScore]:
    return [JudgeScore(j, t, s, track, sc) for j, t, s, sc in JUDGE]


def avg(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def hand_human(rows: list[tuple], measure: int | None) -> dict[str, float]:
    """Each evaluation's criteria average (or one criterion), then the mean per system."""
    per: dict[str, list[float]] = {}
    for _, s, _, sc in rows:
        values = list(sc.values())
        per.setdefault(s, []).append(avg(values) if measure is None else values[measure])
    return {s: avg(v) for s, v in per.items()}


def hand_judge(scope: set[str] | None, measure: int | None) -> dict[str, float]:
    """Each judge's mean over its valid examples, then the judges averaged equally (App. E.5)."""
    per: dict[str, dict[str, list[float]]] = {}
    for j, t, s, sc in JUDGE:
        if sc is None or (scope is not None and t not in scope):
            continue
        values = list(sc.values())
        per.setdefault(s, {}).setdefault(j, []).append(avg(values) if measure is None else values[measure])
    return {s: avg([avg(v) for v in js.values()]) for s, js in per.items()}


def scipy_triplet(h: dict[str, float], j: dict[str, float]) -> dict[str, float]:
    systems = sorted(set(h) & set(j))
    x, y = [h[s] for s in systems], [j[s] for s in systems]
    return {
        "spearman": stats.spearmanr(x, y).statistic,
        "kendall_tau_b": stats.kendalltau(x, y, variant="b").statistic,
        "pearson": stats.pearsonr(x, y).statistic,
    }


def test_means_follow_the_papers_weighting() -> None:
    # a: evaluations average 2, 3, 2.5 -> 2.5 (each evaluation weighs the same, not each transition)
    assert human_means(evaluations(), "text", "overall")["a"] == pytest.approx((2 + 3 + 2.5) / 3)
    # j1 on a: examples average 3, 4, 2 -> 3; j2 on a: 4 -> the judges' equal average 3.5
    assert judge_means(judges(), "text", "overall", None)["a"] == pytest.approx(3.5)
    # j2's invalid answer on b is no example: j1 (5.5, 5, 7 -> 5.8333), j2 (5) -> 5.41667
    assert judge_means(judges(), "text", "overall", None)["b"] == pytest.approx(((5.5 + 5 + 7) / 3 + 5) / 2)
    # the window comparator drops t4
    assert judge_means(judges(), "text", "overall", set(WINDOW))["a"] == pytest.approx(((3 + 4) / 2 + 4) / 2)
    assert human_means(evaluations(), "text", "ground_truth_consistency")["d"] == pytest.approx(8.5)


@pytest.mark.parametrize("scope", [None, set(WINDOW)], ids=["release", "window"])
def test_correlations_and_loto_ranges_match_a_hand_computation(scope: set[str] | None) -> None:
    report = agreement(evaluations(), judges(), ["text"], WINDOW, scope)["text"]
    for index, measure in [(None, "overall"), *enumerate(CRITERIA)]:
        result = report[measure]
        expected = scipy_triplet(hand_human(HUMAN, index), hand_judge(scope, index))
        assert result["systems"] == 4
        for name, value in expected.items():
            assert result[name]["value"] == pytest.approx(value, abs=1e-12), (measure, name)
        # LOTO: drop each transition's human ratings, judge means fixed; d vanishes without t3.
        loto: dict[str, list[float]] = {name: [] for name in expected}
        kept_systems = []
        for left_out in WINDOW:
            rows = [r for r in HUMAN if r[0] != left_out]
            human = hand_human(rows, index)
            kept_systems.append(len(set(human)))
            for name, value in scipy_triplet(human, hand_judge(scope, index)).items():
                loto[name].append(value)
        assert result["loto"]["systems"] == [min(kept_systems), max(kept_systems)] == [3, 4]
        for name, values in loto.items():
            assert result["loto"][name] == pytest.approx([min(values), max(values)], abs=1e-12), (measure, name)


def test_composite_needs_every_track_and_undefined_is_said() -> None:
    text, image = evaluations("text"), [e for e in evaluations("image") if e.system != "a"]
    judged = judges("text") + judges("image")
    report = agreement(text + image, judged, ["text", "image"], WINDOW, None)
    composite = report["composite"]["overall"]
    human_text, human_image = hand_human(HUMAN, None), hand_human([r for r in HUMAN if r[1] != "a"], None)
    judge_both = hand_judge(None, None)
    human = {s: (human_text[s] + human_image[s]) / 2 for s in human_image}
    assert composite["systems"] == 3, "a has no image evaluations: the composite omits it"
    assert composite["spearman"]["value"] == pytest.approx(scipy_triplet(human, judge_both)["spearman"], abs=1e-12)
    two = agreement([e for e in text if e.system in ("a", "b")], judged, ["text"], WINDOW, None)
    assert two["text"]["overall"]["undefined"].startswith("2 system(s)")
    flat = [JudgeScore("j", "t1", s, "text", four(5, 5, 5, 5)) for s in SYSTEMS]
    assert "same judge mean" in agreement(text, flat, ["text"], WINDOW, None)["text"]["overall"]["undefined"]
    rows = {r["system"]: r for r in system_table(text, judged, ["text"], None)}
    assert rows["b"]["tracks"]["text"]["judge"] | {"criteria": None} == {
        "mean": pytest.approx(((5.5 + 5 + 7) / 3 + 5) / 2, abs=1e-12),
        "criteria": None,
        "valid": 4,
        "invalid": 1,
        "judges": 2,
    }
    assert rows["d"]["tracks"]["text"]["human"]["evaluations"] == 2


# Judge examples (judge, transition, system, the example's score on every criterion) where t4, outside the
# window, moves the ranking: a and b swap, c stays; j2 scores only on the window.
MOVING = [
    ("j1", "t1", "a", 5), ("j1", "t2", "a", 6), ("j1", "t4", "a", 1),
    ("j1", "t1", "b", 4), ("j1", "t4", "b", 10),
    ("j1", "t1", "c", 7), ("j1", "t3", "c", 8), ("j1", "t4", "c", 7),
    ("j1", "t2", "d", 2), ("j1", "t4", "d", 3),
    ("j2", "t1", "a", 5), ("j2", "t1", "b", 3), ("j2", "t2", "c", 9), ("j2", "t3", "d", 4),
]  # fmt: skip


def judged_moving(track: str, scope: set[str] | None, drop: tuple[str, str] = ("", "")) -> dict[str, float]:
    per: dict[str, dict[str, list[float]]] = {}
    for j, t, s, v in MOVING:
        if (scope is None or t in scope) and (s, t) != drop:
            per.setdefault(s, {}).setdefault(j, []).append(float(v))
    return {s: avg([avg(v) for v in js.values()]) for s, js in per.items()}


def test_the_judges_ranking_on_the_window_against_the_full_set_matches_scipy() -> None:
    """App. F.5: the judges' system means on the window's transitions against their means on every transition
    they judged, per track and for the composite, to scipy's figures."""
    scores = [JudgeScore(j, t, s, "text", four(v, v, v, v)) for j, t, s, v in MOVING]
    scores += [JudgeScore(j, t, s, "image", four(v, v, v, 10 - v)) for j, t, s, v in MOVING if (s, t) != ("d", "t2")]
    report = window_vs_full(scores, ["text", "image"], WINDOW)
    window, full = judged_moving("text", set(WINDOW)), judged_moving("text", None)
    x, y = [window[s] for s in SYSTEMS], [full[s] for s in SYSTEMS]
    assert stats.spearmanr(x, y).statistic < 1, "the case must move a rank"
    result = report["text"]
    assert result["systems"] == 4
    assert result["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert result["kendall_tau_b"] == pytest.approx(stats.kendalltau(x, y, variant="b").statistic, abs=1e-12)
    assert result["means"]["b"] == {"window": pytest.approx(3.5, abs=1e-12), "full": pytest.approx(5.0, abs=1e-12)}
    assert result["mean_window"] == pytest.approx(sum(x) / 4, abs=1e-12)
    assert result["mean_full"] == pytest.approx(sum(y) / 4, abs=1e-12)
    # image: an example's four criteria (v, v, v, 10 - v) average to v / 2 + 2.5; d loses its t2 example
    image_window = {s: v / 2 + 2.5 for s, v in judged_moving("image", set(WINDOW), ("d", "t2")).items()}
    image_full = {s: v / 2 + 2.5 for s, v in judged_moving("image", None, ("d", "t2")).items()}
    systems = sorted(set(image_window) & set(image_full))
    composite_w = [(window[s] + image_window[s]) / 2 for s in systems]
    composite_f = [(full[s] + image_full[s]) / 2 for s in systems]
    both = report["composite"]
    assert both["systems"] == len(systems) == 4
    assert both["spearman"] == pytest.approx(stats.spearmanr(composite_w, composite_f).statistic, abs=1e-12)
    assert both["kendall_tau_b"] == pytest.approx(
        stats.kendalltau(composite_w, composite_f, variant="b").statistic, abs=1e-12
    )
    flat = [JudgeScore("j", t, s, "text", four(5, 5, 5, 5)) for s in SYSTEMS for t in WINDOW]
    assert "same judge mean on the window" in window_vs_full(flat, ["text"], WINDOW)["text"]["undefined"]
    one = window_vs_full(flat[:1], ["text"], WINDOW)["text"]
    assert one["undefined"].startswith("1 system(s)") and "spearman" not in one


def _release(n: int) -> StoryRelease:
    return StoryRelease(Path("."), "r", "1", "0" * 64, {f"t{i:03d}": {"id": f"t{i:03d}"} for i in range(n)})


def test_the_window_is_seeded_stable_and_in_release_order() -> None:
    release = _release(50)
    first = choose_window(release, 10, seed=3)
    assert first == choose_window(release, 10, seed=3) and len(first) == 10
    assert first == sorted(first), "kept in release order"
    reversed_release = StoryRelease(Path("."), "r", "1", "0" * 64, dict(reversed(list(release.records.items()))))
    assert sorted(choose_window(reversed_release, 10, seed=3)) == first, "independent of the file's order"
    assert choose_window(release, 10, seed=4) != first
    assert choose_window(release, chosen=("t007", "t002")) == ["t002", "t007"]
    with pytest.raises(ValidationFailed, match="'t999' is not a transition"):
        choose_window(release, chosen=("t999",))
    with pytest.raises(ValidationFailed, match="has 50 transitions"):
        choose_window(release, 51)


def test_judge_lines_take_the_judges_own_keys_and_name_each_problem(tmp_path: Path) -> None:
    lines = [
        {
            "judge": "qwen",
            "system": "a",
            "transition": "t1",
            "track": "image",
            "scores": {
                "alignment_with_metadata": {"score": 7, "rationale": "ok"},
                "visual_narrative_continuity_from_current_scene": 6,
                "satisfaction_of_generation_conditions": 5,
                "semantic_consistency_with_ground_truth": 4,
            },
        },
        {"judge": "qwen", "system": "a", "transition": "t2", "track": "text", "scores": None},
        {"judge": "qwen", "system": "a", "transition": "t3", "track": "text", "scores": four(1, 2, 3, 11)},
        {"judge": "qwen", "system": "a", "transition": "t3", "track": "speech", "scores": {"continuity": 3}},
        {"judge": "qwen", "system": "a", "transition": "t3", "track": "video", "scores": None},
    ]
    path = tmp_path / "judges.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    problems: list = []
    parsed = list(read_models(path, JudgeLine, problems))
    assert [n for n, _ in parsed] == [1, 2]
    assert parsed[0][1].scores == four(7, 6, 5, 4) and parsed[1][1].scores is None
    text = "\n".join(map(str, problems))
    assert "judges.jsonl:3" in text and "score 11 is out of range 1–10" in text
    assert "judges.jsonl:4" in text and "missing criteria metadata_alignment" in text
    assert "judges.jsonl:5: track" in text
