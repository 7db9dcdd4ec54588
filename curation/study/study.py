"""A study as stored: loading it, importing judge scores, and the report (App. F.5)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from curation.errors import NotFoundError, Problem, ValidationFailed
from curation.jsonl import read_models
from curation.workspace import Workspace, record_event

from .agreement import (
    COMPOSITE,
    OVERALL,
    STATISTICS,
    Evaluation,
    JudgeScore,
    agreement,
    inter_rater,
    system_table,
    window_vs_full,
)
from .lines import JudgeLine
from .rubric import CRITERIA, SCALE
from .tables import StoryStudy, StudyJudgeScore

COMPARATORS = ("release", "window")


def load_study(ws: Workspace, name: str) -> StoryStudy:
    with ws.session() as s:
        study = s.get(StoryStudy, name)
    if study is None:
        raise NotFoundError(f"no story study {name!r}; create it with `curate story study create {name} ...`")
    return study


def import_judge_scores(ws: Workspace, name: str, path: Path, actor: str = "cli") -> dict[str, int]:
    """Validate the whole file, then store each line (a changed score replaces the stored one, as an event)."""
    study = load_study(ws, name)
    file = str(path)
    problems: list[Problem] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    lines: list[JudgeLine] = []
    known_transitions, systems = set(study.transitions), set(study.systems)
    for number, line in read_models(path, JudgeLine, problems):
        key = (line.judge, line.system, line.transition, line.track)
        if line.system not in systems:
            problems.append(
                Problem(
                    f"{line.system!r} has no outputs in study {name} ({', '.join(study.systems)})",
                    "system",
                    number,
                    file,
                )
            )
        if line.transition not in known_transitions:
            problems.append(
                Problem(f"{line.transition!r} is not a transition of the study's release", "transition", number, file)
            )
        if line.track not in study.tracks:
            problems.append(Problem(f"the study rates tracks {', '.join(study.tracks)}", "track", number, file))
        if key in seen:
            problems.append(
                Problem(f"the same judge, system, transition and track as line {seen[key]}", "judge", number, file)
            )
        seen.setdefault(key, number)
        lines.append(line)
    if not lines and not problems:
        problems.append(Problem("no judge scores in the file", file=file))
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; no judge score was stored")
    counts = Counter[str]()
    with ws.writing() as s:
        existing = {
            (r.judge, r.system, r.transition, r.track): r
            for r in s.execute(select(StudyJudgeScore).where(col(StudyJudgeScore.study) == name)).scalars()
        }
        for line in lines:
            key = (line.judge, line.system, line.transition, line.track)
            row = existing.get(key)
            if row is None:
                s.add(
                    StudyJudgeScore(
                        study=name,
                        judge=line.judge,
                        system=line.system,
                        transition=line.transition,
                        track=line.track,
                        scores=line.scores,
                    )
                )
                counts["stored"] += 1
            elif row.scores == line.scores:
                counts["unchanged"] += 1
            else:
                record_event(
                    s,
                    actor,
                    "study.judge_score_replaced",
                    f"study:{name}",
                    {"key": list(key), "scores": row.scores},
                    {"key": list(key), "scores": line.scores},
                )
                row.scores = line.scores
                s.add(row)
                counts["replaced"] += 1
        if counts["stored"] or counts["replaced"]:
            record_event(s, actor, "study.judge_scores_imported", f"study:{name}", None, {"file": path.name, **counts})
    return {
        "stored": counts["stored"],
        "replaced": counts["replaced"],
        "unchanged": counts["unchanged"],
        "invalid_answers": sum(1 for line in lines if line.scores is None),
    }


def judge_scores(ws: Workspace, name: str) -> list[JudgeScore]:
    with ws.session() as s:
        rows = s.execute(select(StudyJudgeScore).where(col(StudyJudgeScore.study) == name)).scalars().all()
    return [JudgeScore(r.judge, r.transition, r.system, r.track, r.scores) for r in rows]


def study_report(
    study: StoryStudy,
    units: Sequence[tuple[str, str, str]],
    evaluations: Sequence[Evaluation],
    skips: int,
    judges: Sequence[JudgeScore],
    comparator: str = "release",
) -> dict[str, Any]:
    """The study's report: coverage, inter-rater alpha, system means, and human–judge agreement.

    ``units``: (transition, system, track) of every rated output; ``comparator``: whose transitions' judge
    scores make the judge means — every judged transition of the release (App. F.5's main comparison) or
    only the window's."""
    if comparator not in COMPARATORS:
        raise ValidationFailed([Problem(f"comparator is one of {', '.join(COMPARATORS)}", "comparator")])
    tracks = list(study.tracks)
    scope = set(study.window) if comparator == "window" else None
    per_unit = Counter((e.transition, e.system, e.track) for e in evaluations)
    cells = Counter((system, track) for _, system, track in units)
    judged = {j.transition for j in judges if scope is None or j.transition in scope}
    return {
        "study": study.name,
        "release": {
            "name": study.release_name,
            "version": study.release_version,
            "manifest_sha256": study.manifest_sha256,
        },
        "window": list(study.window),
        "seed": study.seed,
        "tracks": tracks,
        "criteria": list(CRITERIA),
        "scale": list(SCALE),
        "comparator": comparator,
        "coverage": {
            "units": len(units),
            "evaluations": len(evaluations),
            "skips": skips,
            "raters": len({e.rater for e in evaluations}),
            "units_rated": sum(1 for u in units if per_unit[u]),
            "systems": len(study.systems),
            "per_track": {
                t: {
                    "units": sum(1 for u in units if u[2] == t),
                    "evaluations": sum(1 for e in evaluations if e.track == t),
                    "mean_evaluations_per_system": sum(1 for e in evaluations if e.track == t)
                    / max(1, sum(1 for s, tr in cells if tr == t)),
                }
                for t in tracks
            },
            "judges": sorted({j.judge for j in judges}),
            "judged_transitions": len(judged),
        },
        "inter_rater": inter_rater(evaluations, tracks),
        "systems": system_table(evaluations, judges, tracks, scope),
        "agreement": agreement(evaluations, judges, tracks, study.window, scope),
        "window_vs_full": window_vs_full(judges, tracks, study.window),
    }


def headline(report: dict[str, Any]) -> list[str]:
    """One line per track (and the composite): the overall correlations and their LOTO ranges."""
    lines = []
    for track, measures in report["agreement"].items():
        result = measures[OVERALL]
        if "undefined" in result:
            lines.append(f"{track}: undefined — {result['undefined']}")
            continue
        parts = []
        for name in STATISTICS:
            value = result[name]["value"]
            span = result["loto"].get(name)
            parts.append(f"{name} {value:.3f}" + (f" (LOTO {span[0]:.3f}–{span[1]:.3f})" if span else ""))
        lines.append(f"{track} ({result['systems']} systems): " + ", ".join(parts))
    for track, result in report["window_vs_full"].items():
        if "undefined" in result:
            lines.append(f"judges, window vs full, {track}: undefined — {result['undefined']}")
        else:
            lines.append(
                f"judges, window vs full, {track} ({result['systems']} systems): Spearman rho "
                f"{result['spearman']:.3f}, Kendall tau-b {result['kendall_tau_b']:.3f}; mean "
                f"{result['mean_window']:.2f} on the window, {result['mean_full']:.2f} in full"
            )
    return lines


def any_defined(report: dict[str, Any]) -> bool:
    return any("undefined" not in m for t in report["agreement"].values() for m in t.values())


__all__ = ["COMPOSITE", "any_defined", "headline", "import_judge_scores", "judge_scores", "load_study", "study_report"]
