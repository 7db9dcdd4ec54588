"""``curate stats``: agreement statistics on any ratings file (no workspace needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import print_json

app = typer.Typer(
    help="Agreement statistics on a ratings file (CSV with header unit,coder,value, or JSON Lines with "
    "those keys; an optional group column makes the bootstrap resample whole groups).",
    no_args_is_help=True,
)

RatingsFile = Annotated[
    Path,
    typer.Argument(
        help="Ratings in long form: one row per rating; a missing rating is simply absent.", dir_okay=False
    ),
]
Bootstrap = Annotated[
    int,
    typer.Option(
        "--bootstrap", min=0, help="Number of bootstrap resamples for a confidence interval (0: none)."
    ),
]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap's random generator.")]
Confidence = Annotated[
    float, typer.Option("--confidence", min=0.5, max=0.999, help="Confidence level of the interval.")
]
JsonOutput = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of text.")]


def _report(estimate, path: Path, as_json: bool, extra: dict[str, object] | None = None) -> None:  # type: ignore[no-untyped-def]
    """Print the estimate: 3 decimals as text, full precision as JSON."""
    extra = extra or {}
    if as_json:
        print_json({"file": str(path), **estimate.as_dict(), **extra})
        return
    typer.echo(estimate.summary())
    details = f"units: {estimate.units}, coders: {estimate.coders}, ratings: {estimate.ratings}"
    for key, value in extra.items():
        details += (
            f", {key.replace('_', ' ')}: {value:.3f}" if isinstance(value, float) else f", {key}: {value}"
        )
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

    estimate = krippendorff_alpha(read_ratings(file), level, bootstrap, seed, confidence)
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

    ratings = read_ratings(file)
    estimate = cohen_kappa(ratings, weights, bootstrap, seed, confidence)
    _report(estimate, file, as_json, {"raw_agreement": raw_agreement(ratings)})


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

    estimate = fleiss_kappa(read_ratings(file), bootstrap, seed, confidence)
    _report(estimate, file, as_json)
