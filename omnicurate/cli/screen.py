"""``curate import candidates``, ``curate screen``, ``curate story audit|promote|revise|diff`` (the screening\nfunnel is shown by ``curate funnel``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from .common import JsonFlag, checked_backend, err_console, open_workspace, out_console, print_json, progress_bar


def import_candidates_cmd(
    file: Annotated[Path, typer.Argument(help="Candidate transitions JSONL; media paths relative to its folder.")],
    actor: Annotated[str, typer.Option(help="Who is importing (recorded in the event log).")] = "cli",
    json_out: JsonFlag = False,
) -> None:
    """Validate every line, then store candidates in batches (re-running completes an interrupted import)."""
    from curation.screening.importer import import_candidates

    report = import_candidates(open_workspace(), file, actor=actor)
    if json_out:
        print_json({"created": report.created, "updated": report.updated, "unchanged": report.unchanged})
    else:
        out_console.print(report.summary())


def print_screen_funnel(funnel: Any) -> None:
    table = Table("step", "in", "kept", "dropped", "reasons", "computed", title=f"{funnel.candidates} candidates")
    for s in funnel.steps:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(s.dropped.items()))
        table.add_row(s.step, str(s.inputs), str(s.kept), str(s.inputs - s.kept), reasons, str(s.computed))
    out_console.print(table)


def _from_here(spec: str | None) -> str | None:
    """A ``replay:``, ``transformers:`` or ``vllm:`` path typed on the command line, made absolute from here."""
    kind, sep, target = (spec or "").partition(":")
    if kind in ("replay", "transformers", "vllm") and sep and target and not Path(target).is_absolute():
        return f"{kind}:{Path.cwd() / target}"
    return spec


def screen_cmd(
    backend: Annotated[
        str | None,
        typer.Option(
            help="Model backend for the model steps (overrides [screen.model] backend; a [screen.model.<step>] "
            "section's own backend still answers its step)."
        ),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Run the screening steps declared in curate.toml; cached outcomes are reused, a funnel is shown."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from curation.screening.pipeline import run_screen

    ws = open_workspace()
    settings = ws.settings.screen
    models: dict[str, Any] = {}
    if any(step in ("score", "annotate") for step in settings.steps):
        from checker.screen_models import open_screen_models

        # the path rule: --backend is typed on the command line (relative to the current folder); the backends
        # written in curate.toml are relative to the workspace
        models = open_screen_models(settings, ws.root, _from_here(backend and checked_backend(backend)))
    with progress_bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as bar:
        tasks: dict[str, Any] = {}

        def progress(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total)
            bar.update(tasks[step], completed=done, total=total)

        funnel = run_screen(ws, settings, None, progress, models)
    if json_out:
        print_json(funnel.to_json())
    else:
        print_screen_funnel(funnel)


story_app = typer.Typer(help="Story transitions (Omni-StoryBench): promote, revise, audit.", no_args_is_help=True)


@story_app.command("audit")
def story_audit_cmd(
    selected: Annotated[
        bool, typer.Option("--selected", help="Audit the last screen's selection (candidates), storing nothing.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """The string-overlap and duplicate audits of Omni-StoryBench (App. C); on story items they are stored
    as the story_audit (blocking) and story_overlap (warning) gates."""
    ws = open_workspace()
    if selected:
        from curation.screening.transitions import audit_selected

        report = audit_selected(ws, ws.settings.screen).to_json()
    else:
        from curation.screening.items import audit_story_items

        report = audit_story_items(ws).to_json()
    if json_out:
        print_json(report)
        return
    share = report["annotation_share"] or {}
    if not selected:
        from curation.audit.workspace import resolutions

        decided = {r.target: r for r in resolutions(ws)}
        for cluster in report["clusters"]:
            r = decided.get(cluster["id"])
            note = f"  (resolved: {'distinct' if r.distinct else f'keep {r.keep}'})" if r else ""
            out_console.print(f"{cluster['id']}: {', '.join(cluster['items'])}{note}", highlight=False, markup=False)
    out_console.print(
        f"{report['items']} transitions; {len(report['duplicate_conditions'])} duplicate condition group(s); "
        f"{len(report['span_leaks'])} foreign 8-word span(s); reference span median "
        f"{report['reference_span']['median']} words, {len(report['reference_span']['flagged'])} flagged; "
        f"absent content share {report['absent_content_share']}; annotation share {share.get('mean')}; "
        f"{len(report['clusters'])} duplicate cluster(s) over {report['clustered_items']} transitions"
        + ("" if selected else " (`curate audit resolve ID --by NAME --keep ITEM | --distinct --reason WHY`)")
    )


@story_app.command("promote")
def story_promote_cmd(
    actor: Annotated[str, typer.Option(help="Who is promoting (recorded in the event log).")] = "cli",
    json_out: JsonFlag = False,
) -> None:
    """Make the transitions the last screen kept into story items (media hashed and stored now)."""
    from curation.screening.items import promote_selected

    ws = open_workspace()
    report = promote_selected(ws, ws.settings.screen, actor=actor)
    if json_out:
        print_json({"created": report.created, "unchanged": report.unchanged, "new_media": report.new_media})
    else:
        out_console.print(report.summary())


@story_app.command("revise")
def story_revise_cmd(
    file: Annotated[Path, typer.Argument(help="Revise records JSONL: {item, stage: revise, reviewer, edits, note}.")],
    json_out: JsonFlag = False,
) -> None:
    """Apply reviewers' edits as new revisions (each record is its reviewer's sign-off), all or nothing."""
    from curation.errors import Problem, ValidationFailed
    from curation.jsonl import read_models
    from curation.screening.items import revise_items
    from curation.screening.revise import ReviseRecord

    problems: list[Problem] = []
    records = list(read_models(file, ReviseRecord, problems))
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in {file}; nothing was recorded")
    report = revise_items(open_workspace(), records, str(file))
    if json_out:
        print_json({"revised": report.revised, "signed_off": report.signed_off})
    else:
        out_console.print(report.summary())


@story_app.command("diff")
def story_diff_cmd(
    item: Annotated[str, typer.Argument(help="Story item id.")],
    json_out: JsonFlag = False,
) -> None:
    """The item's annotation fields that differ from the model's proposal, and who changed them; a field group the
    model proposed nothing for lists every field ("no proposal"), and a value no reviewer is named for is named
    on standard error with what to do."""
    from curation.screening.items import story_item
    from curation.screening.revise import diff_against_proposal, unattributed

    transition = story_item(open_workspace(), item)
    changes = diff_against_proposal(transition)
    for field, message in unattributed(transition):
        err_console.print(
            f"{item}: {field}: {message.split('; ')[0]}; record who wrote it with `curate story revise FILE` (an edit "
            "names its reviewer): a release refuses the item until then",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if json_out:
        print_json(
            [
                {"path": c.path, "proposed": c.proposed, "current": c.current, "by": c.by, "proposal": c.proposal}
                for c in changes
            ]
        )
        return
    table = Table("field", "model proposed", "now", "by")
    for c in changes:
        table.add_row(c.path, str(c.proposed) if c.proposal else "(no proposal)", str(c.current), c.by or "?")
    out_console.print(table if changes else f"{item}: as the model proposed")


def register(app: typer.Typer) -> None:
    from .books import import_books_cmd
    from .items import import_app

    import_app.command("candidates")(import_candidates_cmd)
    import_app.command("books")(import_books_cmd)
    app.command("screen")(screen_cmd)
    app.add_typer(story_app, name="story")
