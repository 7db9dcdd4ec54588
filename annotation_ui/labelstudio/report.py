"""``curate campaign report``: coverage, inter-rater agreement, system means, Elo and judge–human agreement.

Follows Omni-StoryBench App. F.5: an evaluation is one rater's scores for one unit; a system's mean weights
each completed evaluation equally after averaging its criteria; ordinal Krippendorff alpha per criterion;
intervals resample whole units. Pairwise campaigns give win rates and Elo (Judge Anything App. B.5).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select

from curation.errors import Problem, ValidationFailed
from curation.jsonl import read_models
from curation.schema import Identifier
from curation.workspace import Workspace

from .campaigns import load_campaign
from .statistics import bootstrap_mean, correlations, elo, krippendorff_alpha, pair_agreement, system_agreement
from .tables import Campaign, CampaignOutput, CampaignRating, CampaignUnit


class JudgeScore(BaseModel):
    model_config = ConfigDict(extra="forbid")
    judge: Identifier
    item: Identifier
    system: Identifier
    scores: dict[str, float]


class JudgePair(BaseModel):
    model_config = ConfigDict(extra="forbid")
    judge: Identifier
    item: Identifier
    a: Identifier
    b: Identifier
    winner: str


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def campaign_report(ws: Workspace, name: str, judges: Path | None = None, resamples: int = 2000) -> dict[str, Any]:
    campaign, outputs, units = load_campaign(ws, name)
    with ws.session() as s:
        ratings = list(
            s.execute(
                select(CampaignRating).where(CampaignRating.campaign == name).order_by(CampaignRating.annotation_id)
            ).scalars()
        )
    scored = [r for r in ratings if not r.skipped]
    per_unit = Counter(r.unit_id for r in scored)
    histogram = Counter(per_unit.get(u.id, 0) for u in units)
    report: dict[str, Any] = {
        "campaign": name,
        "kind": campaign.kind,
        "criteria": list(campaign.criteria) if campaign.kind == "rating" else ["preference"],
        "scale": [1, campaign.scale_max] if campaign.kind == "rating" else list(("A", "B", "tie")),
        "seed": campaign.seed,
        "coverage": {
            "units": len(units),
            "target": campaign.redundancy,
            "evaluations": len(scored),
            "skips": len(ratings) - len(scored),
            "raters": len({r.rater for r in ratings}),
            "units_at_target": sum(1 for u in units if per_unit.get(u.id, 0) >= campaign.redundancy),
            "ratings_per_unit": {str(k): histogram[k] for k in sorted(histogram)},
            "mean_ratings_per_unit": round(len(scored) / len(units), 4) if units else None,
        },
    }
    by_id = {u.id: u for u in units}
    if campaign.kind == "rating":
        _rating_sections(report, campaign, outputs, by_id, scored, resamples)
    else:
        _pairwise_sections(report, campaign, outputs, by_id, scored)
    if judges is not None:
        report["judges"] = _judges(campaign, outputs, by_id, scored, judges)
    return report


def _overall(campaign: Campaign, rating: CampaignRating) -> float:
    assert rating.scores is not None
    return _mean([float(rating.scores[c]) for c in campaign.criteria])


def _rating_sections(
    report: dict[str, Any],
    campaign: Campaign,
    outputs: dict[int, CampaignOutput],
    units: dict[int, CampaignUnit],
    scored: list[CampaignRating],
    resamples: int,
) -> None:
    report["agreement"] = {
        c: {
            "level": "ordinal",
            **krippendorff_alpha(((r.unit_id, r.rater, r.scores[c]) for r in scored if r.scores), "ordinal").as_json(),
        }
        for c in campaign.criteria
    }
    by_system: dict[str, dict[int, list[CampaignRating]]] = defaultdict(lambda: defaultdict(list))
    for r in scored:
        by_system[outputs[units[r.unit_id].output_a].system][r.unit_id].append(r)
    for o in outputs.values():
        by_system.setdefault(o.system, defaultdict(list))
    systems = []
    for system in sorted(by_system):
        clusters = list(by_system[system].values())
        systems.append(
            {
                "system": system,
                "evaluations": sum(len(c) for c in clusters),
                "overall": bootstrap_mean(
                    [[_overall(campaign, r) for r in c] for c in clusters], resamples, campaign.seed
                ),
                "criteria": {
                    c: bootstrap_mean(
                        [[float(r.scores[c]) for r in cl if r.scores] for cl in clusters], resamples, campaign.seed
                    )
                    for c in campaign.criteria
                },
            }
        )
    report["systems"] = systems
    human = _output_means(campaign, outputs, units, scored)
    games = _games_from_scores(human)
    report["elo"] = {
        "games": len(games),
        "from": "per-item comparisons of output means, in item order",
        "ratings": elo(games),
    }


def _output_means(
    campaign: Campaign, outputs: dict[int, CampaignOutput], units: dict[int, CampaignUnit], scored: list[CampaignRating]
) -> dict[tuple[str, str], float]:
    """(item, system) -> mean over evaluations of the criteria average."""
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in scored:
        o = outputs[units[r.unit_id].output_a]
        values[(o.item, o.system)].append(_overall(campaign, r))
    return {k: _mean(v) for k, v in values.items()}


def _games_from_scores(means: dict[tuple[str, str], float]) -> list[tuple[str, str, float]]:
    by_item: dict[str, dict[str, float]] = defaultdict(dict)
    for (item, system), value in means.items():
        by_item[item][system] = value
    games = []
    for item in sorted(by_item):
        for a, b in itertools.combinations(sorted(by_item[item]), 2):
            x, y = by_item[item][a], by_item[item][b]
            games.append((a, b, 1.0 if x > y else 0.0 if x < y else 0.5))
    return games


def _winner(outputs: dict[int, CampaignOutput], unit: CampaignUnit, choice: str | None) -> str:
    if choice == "A":
        return outputs[unit.output_a].system
    if choice == "B":
        assert unit.output_b is not None
        return outputs[unit.output_b].system
    return "tie"


def _pair_games(outputs: dict[int, CampaignOutput], unit: CampaignUnit, winner: str) -> tuple[str, str, float]:
    assert unit.output_b is not None
    a, b = sorted((outputs[unit.output_a].system, outputs[unit.output_b].system))
    return a, b, 1.0 if winner == a else 0.0 if winner == b else 0.5


def _pairwise_sections(
    report: dict[str, Any],
    campaign: Campaign,
    outputs: dict[int, CampaignOutput],
    units: dict[int, CampaignUnit],
    scored: list[CampaignRating],
) -> None:
    winners = [(r, _winner(outputs, units[r.unit_id], r.choice)) for r in scored]
    report["agreement"] = {
        "preference": {
            "level": "nominal",
            **krippendorff_alpha(((r.unit_id, r.rater, w) for r, w in winners), "nominal").as_json(),
        }
    }
    tally: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outputs.values():
        tally.setdefault(o.system, Counter())
    games = []
    for r, w in winners:
        a, b, score = _pair_games(outputs, units[r.unit_id], w)
        games.append((a, b, score))
        for system, result in ((a, score), (b, 1 - score)):
            tally[system]["wins" if result == 1 else "losses" if result == 0 else "ties"] += 1
    shown_first = Counter(r.choice for r in scored)
    report["systems"] = [
        {
            "system": s,
            "games": sum(t.values()),
            "wins": t["wins"],
            "losses": t["losses"],
            "ties": t["ties"],
            "win_rate": round((t["wins"] + 0.5 * t["ties"]) / sum(t.values()), 4) if sum(t.values()) else None,
        }
        for s, t in sorted(tally.items())
    ]
    report["sides"] = {"A": shown_first.get("A", 0), "B": shown_first.get("B", 0), "tie": shown_first.get("tie", 0)}
    report["elo"] = {
        "games": len(games),
        "from": "human pair choices, in the order they were made",
        "ratings": elo(games),
    }


def _read_judges(campaign: Campaign, outputs: dict[int, CampaignOutput], path: Path) -> list[BaseModel]:
    file = str(path)
    known = {(o.item, o.system) for o in outputs.values()}
    model: type[BaseModel] = JudgeScore if campaign.kind == "rating" else JudgePair
    problems: list[Problem] = []
    lines: list[BaseModel] = []
    for number, parsed in read_models(path, model, problems):
        if isinstance(parsed, JudgeScore):
            if (parsed.item, parsed.system) not in known:
                problems.append(
                    Problem(
                        f"no output of {parsed.system!r} for {parsed.item!r} in the campaign", "system", number, file
                    )
                )
            missing = [c for c in campaign.criteria if c not in parsed.scores]
            if missing:
                problems.append(Problem(f"missing criteria {', '.join(missing)}", "scores", number, file))
        elif isinstance(parsed, JudgePair):
            for side in (parsed.a, parsed.b):
                if (parsed.item, side) not in known:
                    problems.append(
                        Problem(f"no output of {side!r} for {parsed.item!r} in the campaign", "a", number, file)
                    )
            if parsed.winner not in (parsed.a, parsed.b, "tie"):
                problems.append(Problem(f"winner {parsed.winner!r} is neither a, b nor tie", "winner", number, file))
        lines.append(parsed)
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; no report")
    return lines


def _judges(
    campaign: Campaign,
    outputs: dict[int, CampaignOutput],
    units: dict[int, CampaignUnit],
    scored: list[CampaignRating],
    path: Path,
) -> dict[str, Any]:
    lines = _read_judges(campaign, outputs, path)
    result: dict[str, Any] = {}
    if campaign.kind == "rating":
        human = _output_means(campaign, outputs, units, scored)
        by_judge: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
        for line in lines:
            assert isinstance(line, JudgeScore)
            by_judge[line.judge][(line.item, line.system)] = _mean([line.scores[c] for c in campaign.criteria])
        for judge, verdicts in sorted(by_judge.items()):
            shared = sorted(set(verdicts) & set(human))
            result[judge] = {
                "outputs": {
                    **correlations([human[k] for k in shared], [verdicts[k] for k in shared]),
                    "mean_absolute_difference": round(_mean([abs(human[k] - verdicts[k]) for k in shared]), 4)
                    if shared
                    else None,
                },
                "systems": system_agreement(
                    [(system, item, human[(item, system)], verdicts[(item, system)]) for item, system in shared]
                ),
                "elo": elo(_games_from_scores(verdicts)),
            }
        return result
    majority: dict[tuple[str, str, str], str] = {}
    votes: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for r in scored:
        unit = units[r.unit_id]
        a, b, score = _pair_games(outputs, unit, _winner(outputs, unit, r.choice))
        votes[(unit.item, a, b)][a if score == 1 else b if score == 0 else "tie"] += 1
    for key, counter in votes.items():
        (top, count), *rest = counter.most_common()
        if not rest or rest[0][1] < count:
            majority[key] = top
    by_judge_pairs: dict[str, list[JudgePair]] = defaultdict(list)
    for line in lines:
        assert isinstance(line, JudgePair)
        by_judge_pairs[line.judge].append(line)
    for judge, pairs in sorted(by_judge_pairs.items()):
        games, compared = [], []
        for p in pairs:
            a, b = sorted((p.a, p.b))
            said = "A" if p.winner == a else "B" if p.winner == b else "tie"
            games.append((a, b, {"A": 1.0, "B": 0.0, "tie": 0.5}[said]))
            if (p.item, a, b) in majority:
                top = majority[(p.item, a, b)]
                compared.append((p.item, a, b, "A" if top == a else "B" if top == b else "tie", said))
        result[judge] = {"pairs": len(pairs), "accuracy": pair_agreement(compared), "elo": elo(games)}
    return result
