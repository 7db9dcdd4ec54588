"""``curate release build|verify|diff|list``: versioned, verifiable snapshots of the admitted items."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from curation.errors import CheckFailed

from .common import JsonFlag, cli_path, err_console, open_workspace, out_console, print_json

app = typer.Typer(
    help="Versioned releases: build a deterministic snapshot of the admitted items, verify it, compare two.",
    no_args_is_help=True,
)


@app.command("build")
def build_cmd(
    version: Annotated[str, typer.Argument(help="Semantic version, e.g. 0.1.0; a published version is immutable.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Release folder (default: <workspace>/releases/VERSION).")
    ] = None,
    notes: Annotated[
        Path | None,
        typer.Option("--notes", help="Markdown file with release notes for the dataset card (at most 256,000 bytes)."),
    ] = None,
    allow_partial: Annotated[
        bool,
        typer.Option(
            "--allow-partial",
            help="Leave out admitted items that fail an item-level gate (with their sisters) instead of refusing; "
            "the card says so.",
        ),
    ] = False,
    license: Annotated[
        str, typer.Option("--license", help="Licence of the text and annotations (media keep their own).")
    ] = "CC-BY-4.0",
    name: Annotated[str | None, typer.Option("--name", help="Dataset name (default: the workspace folder's).")] = None,
    actor: Annotated[str, typer.Option(help="Who publishes (recorded in the event log).")] = "cli",
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            help="Which kind's units to release (any kind `curate kinds` lists); not needed when the workspace "
            "holds one kind.",
        ),
    ] = None,
    no_rejected: Annotated[
        bool,
        typer.Option(
            "--no-rejected",
            help="Leave the items not admitted (admission/rejected.jsonl) out of the admission record; the card says so.",
        ),
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Re-run the gates on the admitted items and write the release; refuse listing every blocking item."""
    from exports.build import validate_version
    from exports.kind_release import build_kind_release, release_kind

    validate_version(version)
    notes_text = _read_notes(notes) if notes else ""
    ws = open_workspace()
    chosen = release_kind(ws, kind)
    result = build_kind_release(
        ws,
        chosen,
        version,
        out=out,
        notes=notes_text,
        allow_partial=allow_partial,
        license=license,
        name=name,
        actor=actor,
        log=lambda line: err_console.print(line, highlight=False, markup=False, soft_wrap=True),
        rejected=not no_rejected,
    )
    if json_out:
        print_json({"kind": chosen.name, **result.as_json()})
        return
    for item, reasons in result.dropped.items():
        err_console.print(f"left out {item}: {', '.join(reasons)}", highlight=False, markup=False, soft_wrap=True)
    what = "already built, identical" if result.unchanged else "built"
    out_console.print(
        f"release {result.version} ({chosen.name}) {what}: {result.items} units, {result.files} files, "
        f"{result.bytes:,} bytes, dated {result.release_date}\n{result.path}\nmanifest sha256 {result.manifest_sha256}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


MAX_NOTES_BYTES = 256_000
"""Release notes are a section of the dataset card: a larger file is refused with its size, never read whole."""


def _read_notes(path: Path) -> str:
    """The notes' Markdown, read by the shared reader: a FIFO, a device or a folder is named as what it is (a
    FIFO would wait for ever, /dev/zero never ends), and a file that is too large, not UTF-8 or holds a NUL is
    refused by line."""
    from curation.jsonl import read_text_document

    cli_path(path, "--notes", file=True)
    return read_text_document(path, MAX_NOTES_BYTES, "--notes")


@app.command("verify")
def verify_cmd(
    folder: Annotated[Path, typer.Argument(help="A release folder.")],
    manifest_sha256: Annotated[
        str | None,
        typer.Option(
            "--manifest-sha256", help="Expected SHA-256 of manifest.json (from `curate release list` or the publisher)."
        ),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Check every file against manifest.json, list extra files and broken media references; exit 1 on any."""
    from exports.kind_release import manifest_kind
    from exports.verify import verify_release

    folder = cli_path(folder, "release folder")
    report = verify_release(folder, manifest_sha256)
    kind = manifest_kind(folder.resolve()) or "?"
    if json_out:
        print_json({"kind": kind, **report.as_json()})
    else:
        for m in report.mismatches:
            out_console.print(f"{m.kind}: {m.path}: {m.detail}", highlight=False, markup=False, soft_wrap=True)
        verdict = "OK" if report.ok else f"{len(report.mismatches)} mismatch(es)"
        out_console.print(
            f"release {report.version or '?'} ({kind}): {report.files} files, {report.items} items: {verdict}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if not report.ok:
        raise typer.Exit(CheckFailed.exit_code)


@app.command("diff")
def diff_cmd(
    old: Annotated[Path, typer.Argument(help="The earlier release folder.")],
    new: Annotated[Path, typer.Argument(help="The later release folder.")],
    json_out: JsonFlag = False,
) -> None:
    """Items added, removed and changed (with the changed fields) from OLD to NEW: the errata list."""
    from exports.verify import diff_releases

    diff = diff_releases(cli_path(old, "release folder"), cli_path(new, "release folder"))
    if json_out:
        print_json(diff)
        return
    out_console.print(
        f"{diff['kind']} {diff['old']['version'] or old} -> {diff['new']['version'] or new}: {len(diff['added'])} added, "
        f"{len(diff['removed'])} removed, {len(diff['changed'])} changed, {diff['unchanged']} unchanged",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    for item in diff["added"]:
        out_console.print(f"+ {item}", highlight=False, markup=False, soft_wrap=True)
    for item in diff["removed"]:
        out_console.print(f"- {item}", highlight=False, markup=False, soft_wrap=True)
    for change in diff["changed"]:
        out_console.print(
            f"~ {change['id']}: {', '.join(change['fields'])}", highlight=False, markup=False, soft_wrap=True
        )


@app.command("list")
def list_cmd(json_out: JsonFlag = False) -> None:
    """Published versions of this workspace, in version order, with their date, size and manifest digest."""
    from exports.build import list_releases
    from exports.kind_release import manifest_kind

    releases = [
        {**r, "kind": manifest_kind(Path(r["path"])), "bytes": _folder_bytes(Path(r["path"])) if r["present"] else None}
        for r in list_releases(open_workspace())
    ]
    if json_out:
        print_json(releases)
        return
    if not releases:
        err_console.print("no release published yet; build one with `curate release build 0.1.0`", highlight=False)
        return
    table = Table("version", "kind", "date", "items", "size", "manifest", "path", "notes")
    for r in releases:
        notes = ", ".join(["partial"] * bool(r["partial"]) + ["folder missing"] * (not r["present"]))
        size = "—" if r["bytes"] is None else _size(r["bytes"])
        table.add_row(
            r["version"], r["kind"] or "?", r["release_date"], str(r["items"]), size, r["manifest_sha256"][:12],
            r["path"], notes,
        )  # fmt: skip
    out_console.print(table)


def _folder_bytes(folder: Path) -> int:
    """Bytes of every file in a release folder (what copying it moves)."""
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())


def _size(n: int) -> str:
    """Bytes for people: 512 B, 3.4 kB, 12.0 MB (powers of 1000, as `ls -h --si`)."""
    if n < 1000:
        return f"{n} B"
    value, units = n / 1000, ["kB", "MB", "GB"]
    while value >= 1000 and len(units) > 1:
        value, units = value / 1000, units[1:]
    return f"{value:.1f} {units[0]}"


@app.command("reproduce")
def reproduce_cmd(
    folder: Annotated[Path, typer.Argument(help="A release folder (no workspace needed).")],
    json_out: JsonFlag = False,
) -> None:
    """Re-derive every admission from the release's admission record alone; exit 1 on any difference."""
    from checker.reproduce import replay_verdicts
    from exports.reproduce import reproduce_release

    report = reproduce_release(folder, replay_verdicts)
    if json_out:
        print_json(report.as_json())
    else:
        for note in report.notes:
            err_console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
        for difference in report.differences:
            out_console.print(difference, highlight=False, markup=False, soft_wrap=True)
        verdict = "reproduced" if report.ok else f"{len(report.differences)} difference(s)"
        out_console.print(
            f"{report.release}: {report.units} units, {report.records} records: {verdict}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if not report.ok:
        raise typer.Exit(CheckFailed.exit_code)
