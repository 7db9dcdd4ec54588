"""``curate check --probe BACKEND``: the probe-based well-posedness checker (TRIAD App. D.2, G)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from .common import checked_backend, err_console, fail, open_workspace, out_console, print_json, progress_bar

app = typer.Typer(
    help="Probe every view of every item through an omni model and judge well-posedness (a second opinion).",
    invoke_without_command=True,
)


@app.callback()
def check(
    probe: Annotated[
        list[str],
        typer.Option(
            "--probe",
            help="Backend: replay:<file.jsonl>, transformers:<model-path>, vllm:<model-path> "
            "or openai:<base-url>#<model>[#key=ENV_NAME] (the variable holding its API key; default "
            "OPENAI_API_KEY), or the NAME of a [checker.probes.NAME] table in curate.toml. Give it twice for "
            "two probes: a view's set is then the union of theirs (an option counts when either probe "
            "selects it, TRIAD App. D.2).",
        ),
    ],
    estimator: Annotated[
        str, typer.Option(help="sample: K answers per view; logprob: exact option probabilities, one prefill.")
    ] = "sample",
    item: Annotated[list[str] | None, typer.Option("--item", help="Probe only this item (repeatable).")] = None,
    k_strict: Annotated[int, typer.Option(help="K for the strict views (none, singles, pairs).")] = 5,
    k_full: Annotated[int, typer.Option(help="K for the full view.")] = 10,
    temperature: Annotated[float, typer.Option(help="Sampling temperature (also applied to log-probs).")] = 0.7,
    tau: Annotated[float, typer.Option(help="An option is consistent when chosen in at least ⌈τK⌉ of K.")] = 0.2,
    rule: Annotated[
        str, typer.Option(help="logprob mode: binomial (P(Bin(K,p) ≥ ⌈τK⌉) ≥ --min-probability) or threshold (p ≥ τ).")
    ] = "binomial",
    min_probability: Annotated[float, typer.Option(help="Threshold of the binomial rule.")] = 0.5,
    seed: Annotated[int, typer.Option(help="Base seed; each item × view gets its own, spaced by K.")] = 0,
    answer_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="letter (one constrained option key) or json (TRIAD P0's free JSON answer, sample "
            "estimator, transformers and openai backends: the reference recipe).",
        ),
    ] = "letter",
    record: Annotated[
        Path | None,
        typer.Option(
            help="Also write the run as a replay file (JSONL) that reproduces these verdicts.", dir_okay=False
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Probe each item's views (8 for a full item), cached by content; store each item's verdict as its probe gate."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from checker.backends import open_backend
    from checker.backends.base import probe_spec
    from checker.check import check_workspace
    from checker.estimators import EstimatorConfig

    if answer_format not in ("letter", "json"):
        raise fail(f"--format must be letter or json, not {answer_format!r}")
    try:
        config = EstimatorConfig(
            name=estimator,  # type: ignore[arg-type]
            k_strict=k_strict,
            k_full=k_full,
            temperature=temperature,
            tau=tau,
            seed=seed,
            rule=rule,  # type: ignore[arg-type]
            min_probability=min_probability,
        )
    except ValueError as exc:
        raise fail(str(exc)) from exc
    if len(set(probe)) != len(probe):
        raise fail("each --probe may be given once")
    if record is not None and len(probe) > 1:
        raise fail("--record writes one probe's run; give one --probe with it")
    ws = open_workspace()
    backends = {}
    try:
        for spec in probe:
            backends[spec] = open_backend(probe_spec(checked_backend(spec, "--probe"), ws.settings.checker.probes))
    except BaseException:
        for opened in backends.values():
            opened.close()
        raise
    progress = progress_bar(
        TextColumn("probing"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"), TimeElapsedColumn()
    )
    task = progress.add_task("probe", total=None, rate="")
    done = {"n": 0}

    def advance(n: int) -> None:
        done["n"] += n
        elapsed = progress.tasks[0].elapsed or 0.0
        rate = f"{done['n'] / elapsed:.2f} items/s" if elapsed > 0 else ""
        progress.update(task, advance=n, rate=rate)

    try:
        with progress:
            document, stats, skipped, results = check_workspace(
                ws,
                backends,
                config,
                ids=item,
                answer_format=answer_format,  # type: ignore[arg-type]
                on_start=lambda total: progress.update(task, total=total),
                on_item_done=advance,
            )
    finally:
        for backend in backends.values():
            backend.close()
    if record is not None:
        import json

        from checker.backends.replay import replay_lines

        lines = [json.dumps(line, ensure_ascii=False) + "\n" for line in replay_lines(results)]
        record.write_text("".join(lines), encoding="utf-8")
        err_console.print(f"recorded {len(lines)} view(s) to {record}")
    if skipped:
        err_console.print(f"{len(skipped)} item(s) not in the probe source, skipped: {', '.join(skipped)}")
    err_console.print(
        f"{stats.items} item(s): {stats.views_probed} view(s) probed, {stats.views_cached} from the cache, "
        f"{stats.model_calls} model call(s), {stats.generated_tokens} generated token(s), {stats.seconds:.1f} s"
    )
    if json_out:
        print_json(document)
        return
    partial = any(record["unprobed"] for record in document["items"])
    table = Table("item", "verdict", "reducible by", "modal full", "label", "warnings", *(["unprobed"] * partial))
    for record in document["items"]:
        table.add_row(
            record["item"],
            record["verdict"],
            ", ".join(record["reducible_by"]),
            str(record["modal_full"]),
            record["label"],
            ", ".join(record["warnings"]),
            *([", ".join(record["unprobed"])] * partial),
        )
    out_console.print(table)
    summary = document["summary"]
    if partial:
        counts = ", ".join(f"{view} {n}" for view, n in summary["unprobed_views"].items())
        out_console.print(
            f"unprobed views ({counts}): verdicts use the probed views only; well_posed there means no probed "
            "view narrows the options",
            markup=False,
        )
    out_console.print("verdicts: " + ", ".join(f"{k} {v}" for k, v in summary["verdicts"].items()))
    for name, verdicts in summary.get("by_probe", {}).items():
        out_console.print(f"  {name} alone: " + ", ".join(f"{k} {v}" for k, v in verdicts.items()), markup=False)
    shares = ", ".join(f"{v} {s:.0%}" for v, s in summary["reducible_share"].items() if s)  # None: unprobed
    out_console.print(f"reducible per view: {shares or 'none'}")
    agreement = summary.get("human_agreement")
    if agreement:
        kappa = agreement["kappa"]
        shown = f"{kappa:.3f}" if kappa is not None else f"undefined ({agreement.get('why_undefined')})"
        out_console.print(f"agreement with the human checklist over {agreement['items']} item(s): κ = {shown}")
        for d in agreement["disagreements"]:
            out_console.print(f"  {d['item']}: probe {d['probe']}, human {d['human']}")
