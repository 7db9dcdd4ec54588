"""``curate stats``: agreement statistics on any ratings file (no workspace needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import err_console, print_json

app = typer.Typer(
    help="Agreement statistics on a ratings file (CSV with header unit,coder,value, or JSON Lines with "
    "those keys; an optional group column makes the bootstrap resample whole groups).",
    no_args_is_help=True,
)

RatingsFile = Annotated[
    Path,
    typer.Argument(help="Ratings in long form: one row per rating; a missing rating is simply absent.", dir_okay=False),
]
Bootstrap = Annotated[
    int,
    typer.Option("--bootstrap", min=0, help="Number of bootstrap resamples for a confidence interval (0: none)."),
]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap's random generator.")]
Confidence = Annotated[
    float, typer.Option("--confidence", min=0.5, max=0.999, help="Confidence level of the interval.")
]
JsonOutput = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of text.")]


def _estimate(statistic: str, path: Path, as_json: bool, compute):  # type: ignore[no-untyped-def]
    """Run ``compute``; with ``--json`` an undefined statistic is still one JSON document (exit 1)."""
    from curation.agreement import UndefinedStatistic

    try:
        return compute()
    except UndefinedStatistic as exc:
        if not as_json:
            raise
        print_json({"file": str(path), "statistic": statistic, "value": None, "undefined": str(exc)})
        err_console.print(f"error: {exc}", style="bold red", highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None


def _report(estimate, path: Path, as_json: bool, extra: dict[str, object] | None = None) -> None:  # type: ignore[no-untyped-def]
    """Print the estimate: 3 decimals as text, full precision as JSON."""
    extra = extra or {}
    if as_json:
        print_json({"file": str(path), **estimate.as_dict(), **extra})
        return
    typer.echo(estimate.summary())
    details = f"units: {estimate.units}, coders: {estimate.coders}, ratings: {estimate.ratings}"
    for key, value in extra.items():
        details += f", {key.replace('_', ' ')}: {value:.3f}" if isinstance(value, float) else f", {key}: {value}"
    typer.echo(details)
    if estimate.interval is not None and estimate.interval.undefined:
        typer.echo(
            f"note: the statistic was undefined in {estimate.interval.undefined} of "
            f"{estimate.interval.resamples} resamples; the interval uses the others",
            err=True,
        )


@app.command("alpha")
def alpha_command(
    file: RatingsFile,
    level: Annotated[
        str,
        typer.Option("--level", help="Level of measurement: nominal, ordinal, interval or ratio."),
    ] = "nominal",
    bootstrap: Bootstrap = 0,
    seed: Seed = 0,
    confidence: Confidence = 0.95,
    as_json: JsonOutput = False,
) -> None:
    """Krippendorff's alpha; any number of coders, missing ratings allowed."""
    from curation.agreement import krippendorff_alpha, read_ratings

    estimate = _estimate(
        "krippendorff_alpha",
        file,
        as_json,
        lambda: krippendorff_alpha(read_ratings(file), level, bootstrap, seed, confidence),
    )
    _report(estimate, file, as_json)


@app.command("kappa")
def kappa_command(
    file: RatingsFile,
    weights: Annotated[
        str,
        typer.Option("--weights", help="none, linear or quadratic (for ordered scales)."),
    ] = "none",
    bootstrap: Bootstrap = 0,
    seed: Seed = 0,
    confidence: Confidence = 0.95,
    as_json: JsonOutput = False,
) -> None:
    """Cohen's kappa between exactly two coders, over the units both rated."""
    from curation.agreement import cohen_kappa, raw_agreement, read_ratings
    from curation.errors import Problem, ValidationFailed

    ratings = read_ratings(file)
    if len(ratings.coders) != 2:  # a file for another statistic is bad input (exit 2), not an undefined kappa
        shown = ", ".join(ratings.coders[:6]) + (" ..." if len(ratings.coders) > 6 else "")
        raise ValidationFailed(
            [
                Problem(
                    f"Cohen's kappa needs exactly two coders; the ratings have {len(ratings.coders)} ({shown})",
                    "coder",
                    file=str(file),
                )
            ],
            "use `curate stats fleiss` or `curate stats alpha` for more than two coders",
        )

    def compute():  # type: ignore[no-untyped-def]
        return cohen_kappa(ratings, weights, bootstrap, seed, confidence), raw_agreement(ratings)

    estimate, agreement = _estimate("cohen_kappa", file, as_json, compute)
    _report(estimate, file, as_json, {"raw_agreement": agreement})


@app.command("fleiss")
def fleiss_command(
    file: RatingsFile,
    bootstrap: Bootstrap = 0,
    seed: Seed = 0,
    confidence: Confidence = 0.95,
    as_json: JsonOutput = False,
) -> None:
    """Fleiss' kappa: any number of coders, the same number of ratings on every unit."""
    from curation.agreement import fleiss_kappa, read_ratings

    estimate = _estimate(
        "fleiss_kappa", file, as_json, lambda: fleiss_kappa(read_ratings(file), bootstrap, seed, confidence)
    )
    _report(estimate, file, as_json)


def _attempt(compute, undefined: list[str]):  # type: ignore[no-untyped-def]
    """Run one statistic; an undefined one is recorded (exit code 1 at the end), not fatal to the rest."""
    from curation.agreement import UndefinedStatistic

    try:
        return compute()
    except UndefinedStatistic as exc:
        undefined.append(str(exc))
        return {"undefined": str(exc)}


def _score_report(rows, undefined: list[str]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    from curation.agreement import score_agreement
    from curation.agreement.judge import rows_by_criterion

    report = {}
    for criterion, subset in rows_by_criterion(rows).items():
        result = _attempt(lambda s=subset, c=criterion: score_agreement(s, c), undefined)
        report[criterion] = result if isinstance(result, dict) else result.as_dict()
    return {"kind": "scores", "criteria": report}


def _pair_report(rows, undefined: list[str]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    from curation.agreement import bradley_terry, elo_ratings, pair_accuracy

    judged = [r for r in rows if r.judge is not None]
    outcomes = {"human": (rows, False)} | ({"judge": (judged, True)} if judged else {})
    return {
        "kind": "pairs",
        "pairs": len(rows),
        "judged_pairs": len(judged),
        "accuracy": pair_accuracy(judged).as_dict() if judged else None,
        "elo": {who: elo_ratings(subset, use_judge=j) for who, (subset, j) in outcomes.items()},
        "bradley_terry": {
            who: _attempt(lambda s=subset, j=j: bradley_terry(s, use_judge=j), undefined)
            for who, (subset, j) in outcomes.items()
        },
    }


def _print_judge_report(report: dict) -> None:  # type: ignore[type-arg]
    if report["kind"] == "scores":
        for criterion, result in report["criteria"].items():
            if "undefined" in result:
                typer.echo(f"{criterion}: undefined ({result['undefined']})")
                continue
            typer.echo(
                f"{criterion}: Spearman rho {result['spearman']['value']:.3f} (p {result['spearman']['p_value']:.3f}),"
                f" Kendall tau-b {result['kendall_tau_b']['value']:.3f} (p {result['kendall_tau_b']['p_value']:.3f}),"
                f" Pearson r {result['pearson']['value']:.3f} (p {result['pearson']['p_value']:.3f});"
                f" mean |human - judge| {result['mean_absolute_difference']:.3f}"
                f" over {result['rows']} scores of {result['systems']} systems"
            )
        return
    accuracy = report["accuracy"]
    typer.echo(f"pairs: {report['pairs']}, with a judge outcome: {report['judged_pairs']}")
    if accuracy is not None:
        without = accuracy["without_ties"]
        typer.echo(
            f"judge accuracy: {accuracy['with_ties']:.3f} with ties, "
            + (f"{without:.3f} without ties" if without is not None else "none without ties (all human ties)")
            + f" ({accuracy['human_ties']} human ties)"
        )
    for who, ratings in report["elo"].items():
        ranked = sorted(ratings.items(), key=lambda kv: -kv[1])
        typer.echo(f"Elo ({who}, K=32): " + ", ".join(f"{name} {value:.1f}" for name, value in ranked))
    for who, strengths in report["bradley_terry"].items():
        if "undefined" in strengths:
            typer.echo(f"Bradley-Terry ({who}): undefined ({strengths['undefined']})")
            continue
        ranked = sorted(strengths.items(), key=lambda kv: -kv[1])
        typer.echo(f"Bradley-Terry ({who}): " + ", ".join(f"{name} {value:.3f}" for name, value in ranked))


@app.command("judge")
def judge_command(
    file: Annotated[
        Path,
        typer.Argument(
            dir_okay=False,
            help="Scores (system, item, [criterion,] human, judge) or pairs (item, a, b, human, [judge]; "
            "outcomes A, B or tie), as CSV or JSON Lines.",
        ),
    ],
    as_json: JsonOutput = False,
) -> None:
    """Judge-human agreement: system-level correlations and MAD, or pair accuracy, Elo and Bradley-Terry."""
    from curation.agreement.judge import read_judge_file

    kind, rows = read_judge_file(file)
    undefined: list[str] = []
    report = _score_report(rows, undefined) if kind == "scores" else _pair_report(rows, undefined)
    if as_json:
        print_json({"file": str(file), **report})
    else:
        _print_judge_report(report)
    if undefined:
        raise typer.Exit(1)
