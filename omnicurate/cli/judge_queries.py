"""``curate judge queries ...`` and ``curate judge import queries``: query curation before checklist drafting
(Judge Anything §2.1) — candidate queries from an existing benchmark, audited, screened, refined, promoted."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

if TYPE_CHECKING:
    from curation.kinds.judge.query_draw import DrawSpec

from .common import JsonFlag, checked_backend, err_console, open_workspace, out_console, print_json

app = typer.Typer(
    help="Query curation: audit, screen (keep/drop: nsfw, low_quality, out_of_scope), refine, promote to tasks.",
    no_args_is_help=True,
)


def import_queries(
    source: Path, mapping: list[str], defaults: dict[str, str], spec: DrawSpec | None = None, actor: str = "cli"
) -> dict[str, Any]:
    """A JSONL of query lines is imported as it is (its problems name its lines); Parquet, Arrow and folders
    are turned into query lines through the mapping first. ``spec``: only a seeded draw is imported."""
    from curation.errors import ValidationFailed
    from curation.kinds.judge.queries import import_queries as import_lines
    from omnicurate.table_sources import parse_mapping, relocated, write_query_lines

    ws = open_workspace()
    columns = parse_mapping(mapping)
    if source.suffix == ".jsonl" and source.is_file() and not columns and not defaults:
        return import_lines(ws, source, actor, spec)
    with tempfile.TemporaryDirectory(prefix="curate-queries-") as folder:
        lines, rows, origins = write_query_lines(source, columns, defaults, Path(folder))
        try:
            return {"rows": rows, **import_lines(ws, lines, actor, spec, str(source))}
        except ValidationFailed as exc:  # named by the user's file and line, not by the written one
            raise relocated(exc, lines, origins, source) from exc


def print_import(result: dict[str, Any]) -> None:
    """Counts, the draw and every query held for its licence, by name."""
    counts = {k: v for k, v in result.items() if isinstance(v, int)}
    out_console.print("queries: " + ", ".join(f"{v} {k}" for k, v in counts.items()), highlight=False)
    if draw := result.get("draw"):
        quotas = ", ".join(f"{n} per {k[4:]}" for k in ("per_task", "per_source") if (n := draw[k]) is not None)
        out_console.print(
            f"drew {len(draw['drawn'])} of {draw['eligible']} open-licence queries ({quotas}, seed {draw['seed']})",
            highlight=False,
        )
    for held in result.get("held_for_licence", []):
        out_console.print(
            f"held: {held['id']}: licence {held['license']!r} is not open ([licences] in curate.toml)",
            highlight=False,
            markup=False,
        )


def parse_defaults(pairs: list[str]) -> dict[str, str]:
    from curation.errors import Problem, ValidationFailed

    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in ("source", "license", "output") or not value:
            raise ValidationFailed([Problem(f"{pair!r}: use source=, license= or output=VALUE", "--set")])
        out[name] = value
    return out


@app.command("list")
def list_cmd(json_out: JsonFlag = False) -> None:
    """Every candidate query: held (audit), screen (waiting), dropped, ready, or promoted to a task."""
    from curation.kinds.judge.queries import query_statuses
    from curation.kinds.judge.query_prescreen import suggestions

    ws = open_workspace()
    statuses, suggested = query_statuses(ws), suggestions(ws)
    if json_out:
        print_json([{**s.as_dict(), "suggestion": suggested.get(s.id)} for s in statuses])
        return
    table = Table("query", "state", "reasons", "model suggests", "task")
    for s in statuses:
        table.add_row(s.id, s.state, ", ".join(s.reasons), suggested.get(s.id, ""), s.task or "")
    out_console.print(table)
    counts: dict[str, int] = {}
    for s in statuses:
        counts[s.state] = counts.get(s.state, 0) + 1
    err_console.print(", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "no query imported yet")


@app.command("prescreen")
def prescreen_cmd(
    backend: Annotated[
        str, typer.Option("--backend", help="replay:<file.jsonl>, transformers:<folder> or openai:<url>#<model>.")
    ],
    by: Annotated[str, typer.Option("--by", help="The person who runs the pre-annotation (a reviewer).")],
    json_out: JsonFlag = False,
) -> None:
    """A model suggests keep or drop (nsfw, low_quality, out_of_scope) for queries waiting for a screener;
    the suggestion is shown in `queries list` and never decides. A replay file's keys are the query ids."""
    from sqlalchemy import select

    from checker.generation import open_generator
    from curation.kinds.judge.query_prescreen import prescreen
    from curation.tables import Asset

    ws = open_workspace()
    generator = open_generator(checked_backend(backend))
    with ws.session() as s:
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}

    def suggest(query: str, system: str, user: str, media: tuple[tuple[str, str], ...]) -> str:
        paths = [(m, ws.asset_path(assets[sha])) for m, sha in media]
        return generator.generate(query, system, user, paths, 0.0, 0)

    counts = prescreen(ws, by, generator.model_id, suggest)
    if json_out:
        print_json(counts)
    else:
        out_console.print(", ".join(f"{v} {k}" for k, v in counts.items()))


@app.command("records")
def records_cmd(
    file: Annotated[Path, typer.Argument(help="JSONL of query_screen and query_refine records.")],
    json_out: JsonFlag = False,
) -> None:
    """Record screening decisions and refinements; a bad line is named FILE:LINE and nothing is recorded."""
    from curation.kinds.judge.queries import import_query_records

    counts = import_query_records(open_workspace(), file)
    if json_out:
        print_json(counts)
    else:
        out_console.print(", ".join(f"{v} {k}" for k, v in counts.items()))


@app.command("revisions")
def revisions_cmd(query: Annotated[str, typer.Argument(help="A query id.")], json_out: JsonFlag = False) -> None:
    """A query's refinements: who, when, before and after, and why."""
    from curation.kinds.judge.queries import query_revisions

    revisions = query_revisions(open_workspace(), query)
    if json_out:
        print_json(revisions)
        return
    for r in revisions:
        out_console.print(
            f"r{r['revision']} by {r['by']} at {r['at']}: {r['before']!r} -> {r['instruction']!r} ({r['why']})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


@app.command("promote")
def promote_cmd(
    actor: Annotated[str, typer.Option(help="Who promotes (recorded in the event log).")] = "cli",
    json_out: JsonFlag = False,
) -> None:
    """Ready queries (no audit reason, kept by a screener) become judge tasks, ready for checklist drafting."""
    from curation.kinds.judge.queries import promote_queries

    counts = promote_queries(open_workspace(), actor)
    if json_out:
        print_json(counts)
    else:
        out_console.print(f"{counts['promoted']} queries promoted to tasks; draft their checklists next")
