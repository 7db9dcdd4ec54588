"""``curate story study ...``: the human study of a story release (Omni-StoryBench App. F.5).

The domain is ``curation.study``; serving the ratings is ``annotation_ui.labelstudio.story_study``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import JsonFlag, open_workspace, out_console, print_json

app = typer.Typer(
    help="The human study of a story release: a fixed window, system outputs rated in Label Studio, and "
    "human–judge agreement across systems.",
    no_args_is_help=True,
)
ReleaseOpt = Annotated[Path, typer.Option("--release", help="The story release folder (with manifest.json).")]
SizeOpt = Annotated[int, typer.Option("--size", help="How many transitions the window holds (App. F.5: 10).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the window's draw.")]
ChosenOpt = Annotated[
    list[str] | None, typer.Option("--transition", help="Name the window's transitions instead (repeatable).")
]


@app.command("window")
def window_cmd(release: ReleaseOpt, size: SizeOpt = 10, seed: SeedOpt = 0, json_out: JsonFlag = False) -> None:
    """Show the window a study with this seed would rate (run the systems on these transitions)."""
    from curation.study.release import choose_window, read_release

    story = read_release(release)
    window = choose_window(story, size, seed)
    if json_out:
        print_json({"release": story.label, "seed": seed, "window": window})
    else:
        out_console.print(f"{story.label}, seed {seed}: " + " ".join(window), highlight=False)


@app.command("create")
def create_cmd(
    name: Annotated[str, typer.Argument(help="The study's name (also its campaign's).")],
    release: ReleaseOpt,
    outputs: Annotated[
        Path,
        typer.Option(
            help='System outputs JSONL: {"system", "transition", "text"?, "image"?, "audio"?}; paths relative to it.'
        ),
    ],
    size: SizeOpt = 10,
    seed: SeedOpt = 0,
    transition: ChosenOpt = None,
    track: Annotated[
        list[str] | None, typer.Option(help="text, image, speech, integrated (repeatable; default all four).")
    ] = None,
    redundancy: Annotated[int, typer.Option(help="Target ratings per output and track.")] = 2,
    actor: Annotated[str, typer.Option(help="Who creates it (recorded in the event log).")] = "cli",
    json_out: JsonFlag = False,
) -> None:
    """Fix the window and store every output for it (validated whole; nothing is stored on a problem)."""
    from annotation_ui.labelstudio.story_study import create_study
    from curation.study.rubric import TRACKS

    summary = create_study(
        open_workspace(),
        name,
        release,
        outputs,
        size,
        seed,
        tuple(transition or ()),
        tuple(track or TRACKS),
        redundancy,
        actor,
    )
    if json_out:
        print_json(summary)
        return
    out_console.print(
        f"study {name}: {len(summary['window'])} transitions of {summary['release']}, {len(summary['systems'])} "
        f"system(s), {summary['outputs']} output(s), {summary['units']} unit(s) to rate in "
        f"{', '.join(summary['tracks'])}"
        + (f"; {summary['outside_window']} line(s) outside the window ignored" if summary["outside_window"] else ""),
        highlight=False,
    )


@app.command("push")
def push_cmd(
    name: Annotated[str, typer.Argument()],
    recreate: Annotated[bool, typer.Option("--recreate", help="Start a new project when the old one is gone.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Create or update the study's Label Studio project (one task per output and track)."""
    from annotation_ui.labelstudio.story_study import push_study

    from .labelstudio import _connection, _print_push

    ws = open_workspace()
    _print_push(push_study(ws, _connection(ws), name, recreate), {"study": name}, f"study {name}", json_out)


@app.command("pull")
def pull_cmd(name: Annotated[str, typer.Argument()], json_out: JsonFlag = False) -> None:
    """Pull the ratings back; every annotation is checked, refusals are listed with their reason."""
    from annotation_ui.labelstudio.story_study import pull_study

    from .labelstudio import _connection, _print_refusal

    ws = open_workspace()
    report = pull_study(ws, _connection(ws), name)
    if json_out:
        print_json(report.as_json())
        return
    for r in report.refused:
        _print_refusal(r["annotation"], r["task"], f"unit {r['unit']}", r["reason"])
    out_console.print(report.summary(), highlight=False)


@app.command("judges")
def judges_cmd(
    name: Annotated[str, typer.Argument()],
    file: Annotated[
        Path,
        typer.Argument(help='Judge scores JSONL: {"judge", "system", "transition", "track", "scores": {...} | null}.'),
    ],
    actor: Annotated[str, typer.Option(help="Who imports (recorded in the event log).")] = "cli",
    json_out: JsonFlag = False,
) -> None:
    """Import judge (model) scores for the study's systems (any transition of the release; validated whole)."""
    from curation.study.study import import_judge_scores

    counts = import_judge_scores(open_workspace(), name, file, actor)
    if json_out:
        print_json(counts)
    else:
        out_console.print(
            f"study {name}: {counts['stored']} judge score(s) stored, {counts['replaced']} replaced, "
            f"{counts['unchanged']} unchanged ({counts['invalid_answers']} invalid answer(s) kept as such)",
            highlight=False,
        )


@app.command("report")
def report_cmd(
    name: Annotated[str, typer.Argument()],
    comparator: Annotated[
        str,
        typer.Option(help="Judge means over every judged transition of the release, or only the window's."),
    ] = "release",
    json_out: JsonFlag = False,
) -> None:
    """System-level Spearman, Kendall tau-b and Pearson between human and judge means, per track and
    criterion and for the composite, with leave-one-transition-out ranges."""
    from annotation_ui.labelstudio.story_study import report_study
    from curation.errors import CheckFailed
    from curation.study.study import any_defined, headline

    report = report_study(open_workspace(), name, comparator)
    if json_out:
        print_json(report)
    else:
        cov = report["coverage"]
        out_console.print(
            f"study {name}: {cov['evaluations']} evaluation(s) of {cov['units']} unit(s) by {cov['raters']} rater(s), "
            f"{cov['skips']} skip(s); judges {', '.join(cov['judges']) or 'none'} on {cov['judged_transitions']} "
            f"transition(s) ({report['comparator']})",
            highlight=False,
        )
        for line in headline(report):
            out_console.print(line, highlight=False)
    if not any_defined(report):
        raise CheckFailed("no correlation is defined yet: it needs three systems with human and judge means")


@app.command("sensitivity")
def sensitivity_cmd(
    name: Annotated[str, typer.Argument()],
    exclude: Annotated[
        Path | None, typer.Option(help="Leave out these transitions (ids, one a line) instead of the flagged ones.")
    ] = None,
    release: Annotated[
        Path | None,
        typer.Option(help="Take the flagged transitions from this release's audit.json (the study's release)."),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """The systems' judge-score ranking without the duplicate-clustered transitions (or a named subset), and
    zero-filled against valid-only: Spearman rho, Kendall tau-b and rank changes (App. C, App. F.4)."""
    from curation.errors import CheckFailed
    from curation.study.sensitivity import sensitivity_lines, study_sensitivity

    report = study_sensitivity(open_workspace(), name, exclude, release)
    if json_out:
        print_json(report)
    else:
        for line in sensitivity_lines(report):
            out_console.print(line, highlight=False)
    if "undefined" in report["without"] and "undefined" in report["zero_filled"]:
        raise CheckFailed("no rank correlation is defined: it needs two systems with distinct judge totals")
