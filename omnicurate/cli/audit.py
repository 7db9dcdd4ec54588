"""``curate media normalize`` and ``curate audit``: the media and audit gates."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .common import JsonFlag, err_console, for_people, open_workspace, out_console, print_json

Actor = Annotated[str, typer.Option(help="Who runs it (recorded in the event log).")]

media_app = typer.Typer(
    help="Normalize media to the recording spec (48 kHz mono 16-bit WAV at -23 LUFS; JPEG q90, <= 1024 px).",
    no_args_is_help=True,
)
audit_app = typer.Typer(
    help="Find duplicate clusters (text, image, audio) and leaks; blocks items until a maintainer resolves them.",
    invoke_without_command=True,
)


def _log(message: str) -> None:
    err_console.print(message, highlight=False, markup=False, soft_wrap=True)


@media_app.command("normalize")
def normalize_cmd(
    check: Annotated[
        bool, typer.Option("--check", help="Only list non-conforming media with reasons (exit 1 if any).")
    ] = False,
    actor: Actor = "cli",
    json_out: JsonFlag = False,
) -> None:
    """Make a normalized derivative of every medium items use (originals stay); store each item's media gate."""
    from curation.audit.normalize import normalize_workspace

    report = normalize_workspace(open_workspace(), check_only=check, actor=actor, log=_log)
    listed = report.nonconforming if check else report.assets
    if json_out:
        print_json({"assets": [a.as_json() for a in listed], "summary": report.summary()})
    else:
        table = Table("asset", "kind", "name", "normalized", "items")
        table.add_column("reasons", overflow="fold")
        for a in listed:
            normalized = (a.normalized or "")[:12] + (" (new)" if a.created else "")
            table.add_row(a.asset[:12], a.kind, a.name, normalized, ", ".join(a.items), ", ".join(a.reasons))
        out_console.print(table)
        summary = report.summary()
        out_console.print(
            f"{summary['assets']} media, {summary['created']} normalized now, {summary['nonconforming']} non-conforming"
        )
    if check and report.nonconforming:
        raise typer.Exit(1)


@media_app.command("measure")
def measure_cmd(json_out: JsonFlag = False) -> None:
    """Measure every stored medium's facts and audit signature not measured yet (a large import leaves them to
    a background step: this waits for it, then measures what is left, showing progress)."""
    from curation.audit.measuring import measure_pending

    from .items import MediaProgress

    with MediaProgress("measuring media", "measured (facts and audit signatures)") as progress:
        measured = measure_pending(open_workspace(), progress=progress)
    if json_out:
        print_json({"measured": measured})
    else:
        out_console.print(f"{measured} media file(s) measured now; every stored medium's facts are measured")


@audit_app.callback(invoke_without_command=True)
def audit_cmd(ctx: typer.Context, actor: Actor = "cli", json_out: JsonFlag = False) -> None:
    """Run every audit; items in an unresolved cluster or leak are held (duplicate:<cluster>, leak:<kind>)."""
    if ctx.invoked_subcommand is not None:
        return
    from curation.audit.audio import fingerprint_methods
    from curation.audit.workspace import audit_workspace, resolutions

    ws = open_workspace()
    _log(fingerprint_methods())
    report = audit_workspace(ws, actor=actor, log=_log)
    if json_out:
        print_json(report.to_dict())
        return
    decided = {r.target: r for r in resolutions(ws)}
    for cluster in report.clusters:
        note = _decision(decided.get(cluster.id))
        out_console.print(f"{cluster.id}: {', '.join(cluster.items)}{note}", highlight=False, markup=False)
        for e in cluster.edges:
            line = f"    {e.a} ~ {e.b}  {e.modality} {e.method} distance {e.distance:.3g}"
            out_console.print(line, highlight=False, markup=False)
    for leak in report.leaks:
        severity = "warning" if not leak.blocking else "blocks"
        note = _decision(decided.get(leak.id))
        evidence = for_people({k: v for k, v in leak.evidence.items() if k != "severity"})
        out_console.print(
            f"{leak.id} {leak.kind} ({severity}): {', '.join(leak.items)}{note}\n    {evidence}",
            highlight=False,
            markup=False,
        )
    for same in report.identical_sisters:
        out_console.print(
            f"group {same.group}: sisters {', '.join(same.items)} are identical in every modality (same text and "
            "media); the group rule refuses them (group:identical_sisters), no resolution needed here",
            highlight=False,
            markup=False,
        )
    blocked = report.gate_reasons(decided.values())
    out_console.print(
        f"{len(report.clusters)} duplicate cluster(s), {len(report.leaks)} leak finding(s); "
        f"{len(blocked)} item(s) blocked until resolved (`curate audit resolve ID --keep ITEM | --distinct`)"
    )


def _decision(resolution) -> str:  # type: ignore[no-untyped-def]
    if resolution is None:
        return ""
    return f"  (resolved: {'distinct' if resolution.distinct else 'keep ' + str(resolution.keep)})"


@audit_app.command("resolve")
def resolve_cmd(
    target: Annotated[
        str,
        typer.Argument(
            help="A cluster id (dup-...) or leak id (leak-...) from `curate audit` or `curate story audit`."
        ),
    ],
    by: Annotated[str, typer.Option("--by", help="The maintainer deciding.")],
    keep: Annotated[
        str | None,
        typer.Option(
            help="Keep this item; the others stay held as its duplicates (discard them). For a story cluster the "
            "members from other books are discarded with the decision."
        ),
    ] = None,
    distinct: Annotated[
        bool, typer.Option("--distinct", help="The members are not duplicates; free them all.")
    ] = False,
    reason: Annotated[str, typer.Option(help="Why (required with --distinct; kept in the event log).")] = "",
) -> None:
    """Record a maintainer's decision on a cluster or leak (an event on every member item); a story duplicate
    cluster (from `curate story audit`) is resolved the same way."""
    from curation.audit.workspace import resolve
    from curation.screening.items import resolve_story_cluster, story_clusters

    ws = open_workspace()
    story = target in story_clusters(ws)
    if story:
        decision = resolve_story_cluster(ws, target, by, keep=keep, distinct=distinct, reason=reason)
    else:
        decision = resolve(ws, target, by, keep=keep, distinct=distinct, reason=reason)
    what = "distinct" if decision.distinct else f"keep {decision.keep}"
    out_console.print(f"{target}: {what} recorded", highlight=False)
    if story and decision.keep:
        from curation.workflow import derive_status

        gone = sorted(st.id for st in derive_status(ws) if st.id in decision.items and st.state == "discarded")
        out_console.print(f"{target}: discarded as duplicates of {decision.keep}: {', '.join(gone)}", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(media_app, name="media")
    app.add_typer(audit_app, name="audit")
