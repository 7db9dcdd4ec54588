"""``curate judge ...``: the judge_task kind (Judge Anything) — import tasks, responses, stage records,
annotations and judge outputs; draft checklists; build samples; see checklists; print the report."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from .common import JsonFlag, checked_backend, err_console, open_workspace, out_console, print_json

if TYPE_CHECKING:
    from curation.kinds.judge.report import ReportSettings
    from curation.workspace import Workspace
from .judge_queries import app as queries_app
from .judge_runs import respond_cmd, run_cmd

app = typer.Typer(
    help="The judge_task kind: checklists, responses, score/pair samples, judges against people.", no_args_is_help=True
)


class ImportKind(StrEnum):
    tasks = "tasks"
    responses = "responses"
    records = "records"
    annotations = "annotations"
    outputs = "outputs"
    queries = "queries"


@app.command("import")
def import_cmd(
    kind: Annotated[
        ImportKind,
        typer.Argument(
            help="tasks, responses, records (stage records), annotations, outputs (judges) or queries (candidates)."
        ),
    ],
    file: Annotated[
        Path,
        typer.Argument(
            help="JSON Lines file (media paths relative to it); for queries also a Parquet/Arrow file or a folder."
        ),
    ],
    by: Annotated[
        str | None,
        typer.Option(
            "--by", help="Who imports the tasks (required for tasks): they own them and never annotate their samples."
        ),
    ] = None,
    mapping: Annotated[
        list[str] | None,
        typer.Option("--map", help="Queries: FIELD=COLUMN of a benchmark's table (repeatable).", show_default=False),
    ] = None,
    default: Annotated[
        list[str] | None,
        typer.Option("--set", help="Queries: FIELD=VALUE for a field no column holds (source, license, output)."),
    ] = None,
    per_task: Annotated[
        int | None,
        typer.Option("--per-task", help="Queries: draw N open-licence queries per task (modality pair), seeded."),
    ] = None,
    per_source: Annotated[
        int | None,
        typer.Option("--per-source", help="Queries: draw N per source within each task (before --per-task)."),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Queries: the draw's seed (the same file and seed draw the same).")
    ] = 0,
    json_out: JsonFlag = False,
) -> None:
    """Import a JSONL file; a bad line is named as FILE:LINE: field: problem and nothing is imported."""
    from curation.errors import Problem, ValidationFailed
    from curation.kinds.judge import annotation_store, output_store, record_import, task_store
    from curation.kinds.judge.query_draw import DrawSpec

    from .judge_queries import import_queries, parse_defaults, print_import

    result: Any
    if kind is ImportKind.queries:
        drawing = per_task is not None or per_source is not None
        spec = DrawSpec(seed, per_task, per_source) if drawing else None
        result = import_queries(file, mapping or [], parse_defaults(default or []), spec)
        if json_out:
            print_json({"kind": kind.value, **result})
        else:
            print_import(result)
        return
    if per_task is not None or per_source is not None:
        raise ValidationFailed(
            [Problem("--per-task and --per-source draw queries; use them with `import queries`", "--per-task")]
        )
    ws = open_workspace()
    if kind is ImportKind.tasks:
        if by is None:
            raise ValidationFailed(
                [Problem("say who imports the tasks with --by PERSON: the importer owns them", "--by")]
            )
        ws.person(by)  # a person of the workspace, refused by name otherwise
        result = task_store.import_tasks(ws, file, actor=by).as_dict()
    elif kind is ImportKind.responses:
        result = task_store.import_responses(ws, file).as_dict()
    elif kind is ImportKind.records:
        result = record_import.import_records(ws, file)
    elif kind is ImportKind.annotations:
        result = annotation_store.import_annotations(ws, file)
    else:
        result = output_store.import_judge_outputs(ws, file).as_dict()
    if json_out:
        print_json({"kind": kind.value, **result})
    else:
        out_console.print(f"{kind.value}: " + ", ".join(f"{v} {k}" for k, v in result.items()))


@app.command("draft")
def draft_cmd(
    backend: Annotated[str, typer.Option("--backend", help="replay:<file.jsonl> or openai:<base-url>#<model>[#vllm].")],
    task: Annotated[list[str] | None, typer.Option("--task", help="Only these tasks (repeatable).")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Draft checklists from the six rubrics (audio and video captioned first, each medium once per model: the
    captions are the caption route's, shared with judge runs); cached answers are reused."""
    from checker.drafting import draft_checklists, open_drafter

    run = draft_checklists(open_workspace(), open_drafter(checked_backend(backend)), task or None)
    if json_out:
        print_json(run.as_dict())
    else:
        out_console.print(f"drafted {len(run.drafted)}, from the cache {len(run.cached)}")


@app.command("checklists")
def checklists_cmd(json_out: JsonFlag = False) -> None:
    """Where each task's checklist stands, the curator/cross-checker agreement and the adjudication queue."""
    from curation.kinds.judge import record_store
    from curation.kinds.judge.checklists import adjudication_queue, rubric_counts, selection_agreement

    ws = open_workspace()
    tasks = record_store.task_checklists(ws)
    document = {
        "tasks": [
            {
                "id": t.task,
                "kind": "judge_task",
                "state": t.state,
                "entries": [e.model_dump(mode="json") for e in t.final],
                "per_rubric": rubric_counts(t.final),
            }
            for t in tasks
        ],
        "agreement": selection_agreement(tasks),
        "adjudication_queue": [d.as_dict() for d in adjudication_queue(tasks)],
    }
    if json_out:
        print_json(document)
        return
    table = Table("task", "state", "entries", "per rubric")
    for row in document["tasks"]:
        per_rubric = ", ".join(f"{rubric} {n}" for rubric, n in row["per_rubric"].items())
        table.add_row(row["id"], row["state"], str(len(row["entries"])), per_rubric)
    out_console.print(table)
    agreement = document["agreement"]
    value = agreement["value"]
    out_console.print(
        f"selection agreement (alpha, task x entry): {value:.3f}"
        if value is not None
        else f"selection agreement: {agreement['undefined']}"
    )
    out_console.print(f"adjudication queue: {len(document['adjudication_queue'])} entries")


@app.command("samples")
def samples_cmd(json_out: JsonFlag = False) -> None:
    """Build score and pair samples from reviewed, usable responses of tasks whose checklist is final (again adds
    only what is new); --json lists every sample with its id."""
    from curation.kinds.judge import sample_store

    ws = open_workspace()
    added = sample_store.build_samples(ws)
    if json_out:  # the samples themselves: their ids are what annotations and judge outputs name
        kinds = ("score", "pair")
        print_json(
            {
                "added": added,
                **{kind: [x.model_dump(mode="json") for x in sample_store.samples(ws, kind)] for kind in kinds},
            }
        )
    else:
        out_console.print(f"added {added['score']} score and {added['pair']} pair samples")


@app.command("audit")
def audit_cmd(json_out: JsonFlag = False) -> None:
    """Near-duplicate videos across tasks (keyframe perceptual hashes, cached per video)."""
    from curation.kinds.judge import video_audit

    found = video_audit.video_duplicates(open_workspace())
    if json_out:
        print_json(found)
        return
    out_console.print(
        f"{found['videos']} video(s), {found['computed']} fingerprinted now; {len(found['pairs'])} near-duplicate pair(s)"
    )
    for pair in found["pairs"]:
        out_console.print(
            f"  {pair['a'][:12]} ~ {pair['b'][:12]}  tasks {', '.join(pair['tasks'])}  ({pair['distance']} bits)"
        )


def _fmt(figure: dict[str, Any]) -> str:
    value = figure.get("value")
    if value is None:
        return "—"
    ci = figure.get("ci")
    return f"{value:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def print_report(report: dict[str, Any]) -> None:
    """The report's overall figures as tables (per rubric and per modality pair are in --json)."""
    scores = report.get("scores")
    if scores:
        table = Table("judge", "n", "pearson", "spearman", "MAE", "exact match", title="Scores (overall) vs people")
        for judge, cells in scores["metrics"].items():
            cell = cells["all"].get("overall")
            if cell:
                table.add_row(
                    judge, str(cell["n"]), *(_fmt(cell[m]) for m in ("pearson", "spearman", "mae", "exact_match"))
                )
        out_console.print(table)
    pairs = report.get("pairs")
    if pairs:
        table = Table("judge", "n", "accuracy", "accuracy w/o ties", title="Pairs (overall) vs people")
        for judge, cells in pairs["metrics"].items():
            cell = cells["all"].get("overall")
            if cell:
                table.add_row(
                    judge, str(cell["n"]), _fmt(cell["accuracy_with_ties"]), _fmt(cell["accuracy_without_ties"])
                )
        out_console.print(table)
        elo = pairs["arena"]["elo"]
        table = Table("system", *elo, title="Elo arena (overall choices)")
        systems = sorted({s for ratings in elo.values() if "undefined" not in ratings for s in ratings})
        for system in systems:
            table.add_row(system, *(f"{r[system]:.0f}" if system in r else "—" for r in elo.values()))
        out_console.print(table)
    if pairs and pairs.get("choice_rates"):
        table = Table("source", "n", "first", "second", "tie", title="Overall choice rates (pairs; Table 6)")
        for source, rates in pairs["choice_rates"].items():
            cell = rates["all"].get("overall")
            if cell and cell["n"]:
                table.add_row(source, str(cell["n"]), *(f"{cell[c]:.1%}" for c in ("first", "second", "tie")))
        out_console.print(table)
    if report.get("consistency"):
        table = Table("judge", "position consistency (pairs)", "run-to-run consistency (units)", title="Consistency")
        for judge, figures in report["consistency"].items():
            position, runs = figures["position"], figures["runs"]
            table.add_row(
                judge,
                "—" if position["value"] is None else f"{position['value']:.3f} ({position['pairs']})",
                "—" if runs["value"] is None else f"{runs['value']:.3f} ({runs['units']})",
            )
        out_console.print(table)


def full_report(ws: Workspace, settings: ReportSettings | None = None) -> dict[str, Any]:
    """The judge-vs-human report with the judges' position and run-to-run consistency (§3.3)."""
    from curation.kinds.judge import output_store
    from curation.kinds.judge.judging import consistency

    report = output_store.report(ws, settings)
    report["consistency"] = consistency(ws)
    return report


@app.command("report")
def report_cmd(
    bootstrap: Annotated[int | None, typer.Option(help="Bootstrap resamples (default: [judge] bootstrap).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    plots: Annotated[
        Path | None,
        typer.Option(
            "--plots", help="Write the rubric correlation heat maps and choice-rate bars (PNG) into this folder."
        ),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Judges against people: scores (Pearson, Spearman, MAE, exact match), pairs (accuracy with and without
    ties), per rubric and per modality pair with bootstrap intervals, evaluator fusion, Elo and Bradley–Terry;
    first / second / tie choice rates and rubric-versus-overall correlation maps of people and judges."""
    from curation.kinds.judge.report import ReportSettings

    ws = open_workspace()
    cfg = ws.settings.judge
    settings = ReportSettings(cfg.judge_scores, cfg.bootstrap if bootstrap is None else bootstrap, seed)
    report = full_report(ws, settings)
    if plots is not None:
        from curation.kinds.judge.report_plots import write_report_plots

        for path in write_report_plots(report, plots):
            err_console.print(f"wrote {path}", highlight=False)
    if json_out:
        print_json(report)
    else:
        print_report(report)
    if "scores" not in report and "pairs" not in report:
        err_console.print("no samples yet: build them with `curate judge samples`")


ls_app = typer.Typer(
    help="Score and pair samples as Label Studio campaigns; pulled annotations are the app's annotations.",
    no_args_is_help=True,
)
app.add_typer(ls_app, name="ls")
app.add_typer(queries_app, name="queries")
app.command("respond")(respond_cmd)
app.command("run")(run_cmd)


class SampleKind(StrEnum):
    score = "score"
    pair = "pair"


@ls_app.command("push")
def ls_push_cmd(
    kind: Annotated[SampleKind, typer.Argument(help="score or pair.")],
    recreate: Annotated[
        bool, typer.Option("--recreate", help="Start a new project when the old one was deleted on the server.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Push the samples still short of their annotators (overlap = annotators per sample); again adds nothing."""
    from annotation_ui.labelstudio.judge_campaigns import push_judge

    from .labelstudio import _connection, _print_push

    ws = open_workspace()
    report = push_judge(ws, _connection(ws), kind.value, recreate)
    _print_push(report, {"kind": kind.value}, f"judge {kind.value} samples", json_out)


@ls_app.command("pull")
def ls_pull_cmd(
    kind: Annotated[SampleKind, typer.Argument(help="score or pair.")],
    strict: Annotated[bool, typer.Option(help="Exit with code 1 when an annotation was refused.")] = False,
    json_out: JsonFlag = False,
) -> None:
    """Validate every annotation and apply each person's latest one as in the app; pulling twice adds nothing."""
    from annotation_ui.labelstudio.judge_campaigns import pull_judge

    from .labelstudio import _connection, _print_refusal

    ws = open_workspace()
    report = pull_judge(ws, _connection(ws), kind.value)
    if json_out:
        print_json(report.as_json())
    else:
        out_console.print(report.summary(), highlight=False)
        for r in report.refused:
            _print_refusal(r["annotation"], r["task"], f"sample {r['sample']}, {r['user']}", r["reason"])
    if strict and report.refused:
        raise typer.Exit(1)
