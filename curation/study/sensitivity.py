"""Ranking sensitivity of a story study's systems (Omni-StoryBench App. C "internal-duplicate sensitivity"
and App. F.4 "sensitivity to zero-filled scoring"), from the judges' scores alone.

A system's score in a track follows App. E.5/F.4: per example, the mean of its four criteria; per judge, the
mean over the examples it scored validly (valid-only) or their sum over every transition of the scope
(zero-filled: a missing or invalid entry counts zero); then the judges averaged with equal weight. A
system's total is the equal mean of its track scores (valid-only needs a score in every track). The
ranking is by total, highest first. Two comparisons against the valid-only ranking of every transition:
without a set of transitions (the duplicate-clustered ones by default), and zero-filled instead of valid-only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError

from curation.errors import Problem, ValidationFailed
from curation.jsonl import (
    field_name,
    not_a_file,
    pydantic_problems,
    read_json_document,
    read_text_document,
    sha256_regular,
)
from curation.workspace import Workspace

from .agreement import JudgeScore, rank_correlation
from .rubric import CRITERIA


def track_scores(
    judges: Iterable[JudgeScore], track: str, scope: set[str], zero_filled: bool = False
) -> dict[str, float]:
    """System -> its judges' equal-weight mean score in ``track`` over the transitions of ``scope``."""
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for j in judges:
        if j.track == track and j.transition in scope and j.scores is not None:
            sums[j.system][j.judge].append(sum(float(j.scores[c]) for c in CRITERIA) / len(CRITERIA))
    result = {}
    for system, per_judge in sums.items():
        means = [sum(v) / (len(scope) if zero_filled else len(v)) for v in per_judge.values()]
        result[system] = sum(means) / len(means)
    return result


def totals(
    judges: Sequence[JudgeScore], tracks: Sequence[str], scope: set[str], systems: Sequence[str], zero_filled: bool
) -> dict[str, float]:
    """System -> the equal mean of its track scores. Valid-only leaves out a system without a valid score in
    some track; zero-filled counts that track 0 (its denominator is the scope)."""
    per_track = {t: track_scores(judges, t, scope, zero_filled) for t in tracks}
    found = {}
    for system in systems:
        if zero_filled:
            found[system] = sum(per_track[t].get(system, 0.0) for t in tracks) / len(tracks)
        elif all(system in per_track[t] for t in tracks):
            found[system] = sum(per_track[t][system] for t in tracks) / len(tracks)
    return found


def ranking(scores: dict[str, float]) -> dict[str, int]:
    """System -> its position (1 = highest total; ties share the better position, competition style)."""
    ordered = sorted(scores, key=lambda s: (-scores[s], s))
    ranks: dict[str, int] = {}
    for position, system in enumerate(ordered, start=1):
        previous = ordered[position - 2] if position > 1 else None
        ranks[system] = ranks[previous] if previous and scores[previous] == scores[system] else position
    return ranks


def compare(before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    """Spearman's rho and Kendall's tau-b between two sets of totals, and every system's rank change."""

    systems = sorted(set(before) & set(after))
    result: dict[str, Any] = {"systems": len(systems)}
    rank_a, rank_b = ranking({s: before[s] for s in systems}), ranking({s: after[s] for s in systems})
    result["ranks"] = [
        {
            "system": s,
            "rank_before": rank_a[s],
            "rank_after": rank_b[s],
            "moved": rank_b[s] - rank_a[s],
            "total_before": before[s],
            "total_after": after[s],
            "change": after[s] - before[s],
        }
        for s in sorted(systems, key=lambda s: (rank_a[s], s))
    ]
    result["rank_moves"] = sum(1 for r in result["ranks"] if r["moved"])
    result["max_abs_change"] = max((abs(r["change"]) for r in result["ranks"]), default=0.0)
    result["left_out"] = sorted(set(before) ^ set(after))
    if len(systems) < 2:
        result["undefined"] = f"{len(systems)} system(s) ranked both ways: a rank correlation needs 2"
        return result
    x, y = [before[s] for s in systems], [after[s] for s in systems]
    return rank_correlation(result, x, y, ("before", "after"), "total")


def sensitivity(
    judges: Sequence[JudgeScore],
    tracks: Sequence[str],
    transitions: Sequence[str],
    systems: Sequence[str],
    excluded: Iterable[str],
    excluded_from: str = "",
) -> dict[str, Any]:
    """The valid-only ranking over every transition, compared with the ranking without ``excluded`` and
    with the zero-filled ranking (both over the judges' scores of the study's transitions)."""
    scope = set(transitions)
    left_out = sorted(set(excluded) & scope)
    base = totals(judges, tracks, scope, systems, zero_filled=False)
    without = totals(judges, tracks, scope - set(left_out), systems, zero_filled=False)
    zero = totals(judges, tracks, scope, systems, zero_filled=True)
    return {
        "tracks": list(tracks),
        "transitions": len(scope),
        "systems": len(systems),
        "valid_only": dict(sorted(base.items())),
        "without": {
            "excluded_from": excluded_from,
            "excluded": left_out,
            "transitions": len(scope) - len(left_out),
            **compare(base, without),
        },
        "zero_filled": {"totals": dict(sorted(zero.items())), **compare(base, zero)},
    }


def sensitivity_lines(report: dict[str, Any]) -> list[str]:
    """The report for people: each comparison's correlations and the systems that moved."""
    lines = [
        f"{report['systems']} system(s), {report['transitions']} transition(s), tracks {', '.join(report['tracks'])}"
    ]
    for name, title in (("without", "without the excluded transitions"), ("zero_filled", "zero-filled vs valid-only")):
        found = report[name]
        head = f"{title}"
        if name == "without":
            head += f" ({len(found['excluded'])} left out, {found['excluded_from'] or 'named'}; {found['transitions']} kept)"
        if "undefined" in found:
            lines.append(f"{head}: undefined — {found['undefined']}")
            continue
        lines.append(
            f"{head}: Spearman rho {found['spearman']:.3f}, Kendall tau-b {found['kendall_tau_b']:.3f}, "
            f"{found['rank_moves']} rank move(s), largest total change {found['max_abs_change']:.3f}"
        )
        for r in found["ranks"]:
            if r["moved"]:
                lines.append(
                    f"  {r['system']}: rank {r['rank_before']} -> {r['rank_after']} "
                    f"({r['total_before']:.3f} -> {r['total_after']:.3f})"
                )
    return lines


MAX_SUBSET_BYTES = 1 << 20
"""A list of transition ids to leave out (``--exclude``) is read whole up to this size."""


class _Cluster(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    items: list[StrictStr]


class _Audit(BaseModel):
    """What the study reads of a release's ``audit.json``: each duplicate cluster's members."""

    model_config = ConfigDict(extra="allow", strict=True)
    clusters: list[_Cluster] = []


def flagged_in_release(folder: Path, manifest_sha256: str) -> list[str]:
    """The transitions a release's audit.json puts in a duplicate cluster (the release must be the study's)."""
    manifest, audit = folder / "manifest.json", folder / "audit.json"
    missing = [p.name for p in (manifest, audit) if (not_a_file(p) or "").startswith("does not exist")]
    if missing:
        raise ValidationFailed(
            [Problem(f"not a story release with audit.json (no {' and no '.join(missing)})", file=str(folder))]
        )
    actual = sha256_regular(manifest)  # a FIFO or a folder in its place is named, never read
    if actual != manifest_sha256:
        raise ValidationFailed(
            [Problem(f"manifest {actual[:12]}… is not the study's release ({manifest_sha256[:12]}…)", file=str(folder))]
        )
    try:
        clusters = _Audit.model_validate(read_json_document(audit)).clusters
    except ValidationError as exc:
        problems = [replace(p, line=None) for p in pydantic_problems(exc, str(audit), 0)]
        raise ValidationFailed(problems, "nothing was left out") from None
    return sorted({i for c in clusters for i in c.items})


def read_subset(path: Path) -> list[tuple[int, str]]:
    """Transition ids, one a line, with their line numbers (blank lines and ``#`` comments ignored); read by the
    shared reader (a regular file, UTF-8, no NUL, at most :data:`MAX_SUBSET_BYTES`)."""
    text = read_text_document(path, MAX_SUBSET_BYTES, "--exclude")
    found = ((n, line.split("#", 1)[0].strip()) for n, line in enumerate(text.split("\n"), start=1))
    return [(n, kept) for n, kept in found if kept]


def study_sensitivity(
    ws: Workspace, name: str, exclude: Path | None = None, release: Path | None = None
) -> dict[str, Any]:
    """The sensitivity report of study ``name``: without ``exclude``'s transitions, else without the duplicate
    clusters of ``release`` (the study's release), else of the workspace's latest story audit."""
    from curation.screening.items import story_clusters

    from .study import judge_scores, load_study

    study = load_study(ws, name)
    if exclude is not None:
        listed, source = read_subset(exclude), str(exclude)
        unknown = [(n, t) for n, t in listed if t not in study.transitions]
        if unknown:
            raise ValidationFailed(
                [
                    Problem(f"{field_name(t)} is not a transition of study {name!r}", line=n, file=source)
                    for n, t in unknown
                ],
                "nothing was left out",
            )
        excluded = [t for _, t in listed]
    elif release is not None:
        excluded, source = flagged_in_release(release, study.manifest_sha256), f"duplicate clusters of {release}"
    else:
        excluded = sorted({i for c in story_clusters(ws).values() for i in c.items})
        source = "duplicate clusters of the latest `curate story audit`"
    report = sensitivity(judge_scores(ws, name), study.tracks, study.transitions, study.systems, excluded, source)
    return {"study": name, **report}
