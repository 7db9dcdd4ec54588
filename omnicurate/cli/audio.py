"""``curate audio``: speakers' consent, takes and the producer's choice, the spot check, and the audio gates."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from curation.audio_production.gates import refresh_audio_gates
from curation.audio_production.loaded import load_audio_facts
from curation.audio_production.records import (
    ConsentIn,
    choose_take,
    import_takes,
    record_consent,
    record_spot_check,
    takes_of,
)
from curation.audio_production.spot_check import spot_check_sample

from .common import cli_path, err_console, fail, open_workspace, out_console, print_json

app = typer.Typer(
    help="Audio production: speakers' consent, takes, the spot check (TRIAD App. B).", no_args_is_help=True
)
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@app.command("consent")
def consent(
    speaker: Annotated[str, typer.Argument(help="The speaker (a person with the speaker role).")],
    scope: Annotated[str, typer.Option(help="What the speaker consented to, as the signed document says.")],
    signed_on: Annotated[str, typer.Option("--signed-on", help="The date the document was signed (YYYY-MM-DD).")],
    document: Annotated[str, typer.Option(help="Where the signed document is kept (never the document itself).")],
    withdrawn: Annotated[bool, typer.Option("--withdrawn", help="Record that the speaker withdrew consent.")] = False,
) -> None:
    """Record a speaker's consent (or its withdrawal); the latest record per speaker counts."""
    try:
        given = ConsentIn(
            speaker=speaker,
            scope=scope,
            signed_on=date.fromisoformat(signed_on),
            document=document,
            withdrawn=withdrawn,
        )
    except ValueError as exc:
        errors = exc.errors() if isinstance(exc, ValidationError) else [{"loc": ("signed_on",), "msg": str(exc)}]
        raise fail("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)) from exc
    record_consent(open_workspace(), given)
    out_console.print(f"{speaker}: consent {'withdrawn' if withdrawn else 'recorded'} ({scope}, {signed_on})")


@app.command("consents")
def consents(json_out: JsonOption = False) -> None:
    """List each speaker's latest consent record."""
    latest = load_audio_facts(open_workspace()).consents
    rows = [
        {
            "speaker": c.speaker,
            "scope": c.scope,
            "signed_on": c.signed_on.isoformat(),
            "document": c.document,
            "withdrawn": c.withdrawn,
        }
        for c in latest.values()
    ]
    if json_out:
        print_json(rows)
        return
    table = Table("speaker", "scope", "signed on", "document", "withdrawn")
    for r in rows:
        table.add_row(r["speaker"], r["scope"], r["signed_on"], r["document"], "yes" if r["withdrawn"] else "")
    out_console.print(table)


@app.command("takes")
def takes(
    file: Annotated[Path, typer.Argument(help='JSONL: {"item": ID, "take": NAME, "audio": PATH} per line.')],
) -> None:
    """Import takes of items' audio (paths relative to the file); the whole file or nothing."""
    report = import_takes(open_workspace(), cli_path(file, "takes file", file=True))
    out_console.print(f"{report.added} take(s) added, {report.unchanged} unchanged")


@app.command("choose")
def choose(
    item: Annotated[str, typer.Argument(help="The item.")],
    take: Annotated[str, typer.Argument(help="The take chosen.")],
    producer: Annotated[str, typer.Option(help="The producer choosing (the one the item's provenance names).")],
    note: Annotated[str, typer.Option(help="Why this take (optional).")] = "",
) -> None:
    """Record the producer's choice of an item's take; the item's audio must be that take to be released."""
    choice = choose_take(open_workspace(), item, take, producer, note)
    out_console.print(f"{item}: take {choice.take} chosen by {producer}")


@app.command("list-takes")
def list_takes(item: Annotated[str, typer.Argument(help="The item.")], json_out: JsonOption = False) -> None:
    """An item's takes, the chosen one marked."""
    ws = open_workspace()
    chosen = load_audio_facts(ws).choices.get(item)
    rows = [
        {"take": t.take, "sha256": t.sha256, "chosen": chosen is not None and chosen.take == t.take}
        for t in takes_of(ws, item)
    ]
    if json_out:
        print_json(rows)
        return
    table = Table("take", "sha256", "chosen")
    for r in rows:
        table.add_row(r["take"], r["sha256"][:12], "yes" if r["chosen"] else "")
    out_console.print(table)


@app.command("spot-sample")
def spot_sample(json_out: JsonOption = False) -> None:
    """The voice-acted clips the spot check covers: ``[audio] spot_check_rate`` of them, drawn with ``spot_check_seed``."""
    sample = spot_check_sample(open_workspace())
    if json_out:
        print_json(sample)
        return
    if not sample:
        err_console.print("no voice-acted clip to sample (a clip whose provenance names a producer)")
        return
    out_console.print("\n".join(sample))


@app.command("spot-check")
def spot_check(
    item: Annotated[str, typer.Argument(help="A sampled item.")],
    listener: Annotated[str, typer.Option(help="The listener (a reviewer not involved in the recording).")],
    verdict: Annotated[str, typer.Option(help="consistent or inconsistent (with the other actors' clips).")],
    note: Annotated[str, typer.Option(help="What the listener heard (optional).")] = "",
) -> None:
    """Record an independent listener's spot check of a sampled clip."""
    if verdict not in ("consistent", "inconsistent"):
        raise fail(f"--verdict: {verdict!r} is neither consistent nor inconsistent")
    record_spot_check(open_workspace(), item, listener, verdict, note)  # type: ignore[arg-type]
    out_console.print(f"{item}: spot check by {listener}: {verdict}")


if TYPE_CHECKING:
    from annotation_ui.labelstudio.pulling import PullCounts

RecreateOption = Annotated[
    bool, typer.Option("--recreate", help="Start a new project when the old one was deleted on the server.")
]


def _print_pull(report: PullCounts, json_out: bool) -> None:
    """A Label Studio pull's report: the JSON, or its summary and each refused annotation with its reason."""
    from .labelstudio import _print_refusal

    if json_out:
        print_json(report.as_json())
        return
    out_console.print(report.summary(), highlight=False)
    for r in report.refused:
        _print_refusal(r["annotation"], r["task"], r["item"], r["reason"])


@app.command("spot-push")
def spot_push(
    recreate: RecreateOption = False,
    json_out: JsonOption = False,
) -> None:
    """Serve the spot check in Label Studio: one task per sampled clip, beside its group's other clips."""
    from annotation_ui.labelstudio.audio_spot_check import push_spot_check

    from .labelstudio import _connection, _print_push

    ws = open_workspace()
    _print_push(push_spot_check(ws, _connection(ws), recreate), {"key": "audio:spot_check"}, "spot check", json_out)


@app.command("spot-pull")
def spot_pull(json_out: JsonOption = False) -> None:
    """Store the listeners' Label Studio verdicts as spot checks; a listener who spoke in or produced the clip, or
    wrote its item, is refused with the reason."""
    from annotation_ui.labelstudio.audio_spot_check import pull_spot_check

    from .labelstudio import _connection

    ws = open_workspace()
    _print_pull(pull_spot_check(ws, _connection(ws)), json_out)


@app.command("takes-push")
def takes_push(
    recreate: RecreateOption = False,
    json_out: JsonOption = False,
) -> None:
    """Serve the producers' choice in Label Studio: one task per voice-acted clip with takes, a player per take."""
    from annotation_ui.labelstudio.audio_takes import push_takes

    from .labelstudio import _connection, _print_push

    ws = open_workspace()
    _print_push(push_takes(ws, _connection(ws), recreate), {"key": "audio:takes"}, "takes", json_out)


@app.command("takes-pull")
def takes_pull(json_out: JsonOption = False) -> None:
    """Store the producers' Label Studio choices as take choices; anyone but the clip's producer is refused."""
    from annotation_ui.labelstudio.audio_takes import pull_takes

    from .labelstudio import _connection

    ws = open_workspace()
    _print_pull(pull_takes(ws, _connection(ws)), json_out)


@app.command("check")
def check(json_out: JsonOption = False) -> None:
    """Judge every clip under the audio gates (consent, takes, spot_check, recording) and store the results that
    `curate status` reads; lists the clips with a reason."""
    findings = refresh_audio_gates(open_workspace())
    rows = [
        {"item": item, "gate": gate, "reasons": reasons, "details": details}
        for gate, by_item in findings.items()
        for item, (reasons, details) in sorted(by_item.items())
        if reasons
    ]
    if json_out:
        print_json(rows)
        return
    table = Table("item", "gate", "reasons")
    for r in rows:
        table.add_row(r["item"], r["gate"], ", ".join(r["reasons"]))
    if not rows:
        err_console.print("every clip passes the audio gates")
        return
    out_console.print(table)
