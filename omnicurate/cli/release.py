"""``curate release build|verify|diff|list``: versioned, verifiable snapshots of the admitted items."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from curation.errors import CheckFailed, Problem, ValidationFailed

from .common import JsonFlag, err_console, open_workspace, out_console, print_json

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
        typer.Option(
            "--notes", help="Markdown file with release notes for the dataset card.", exists=True, dir_okay=False
        ),
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
        str, typer.Option("--kind", help="mcq (default) or story_transition: which kind's admitted items to release.")
    ] = "mcq",
    json_out: JsonFlag = False,
) -> None:
    """Re-run the gates on the admitted items and write the release; refuse listing every blocking item."""
    from exports.build import build_release

    if kind in ("story", "story_transition"):
        from exports.story_release import build_story_release

        if allow_partial:
            raise ValidationFailed(
                [
                    Problem(
                        "a story release has no item gates to leave items out by: it holds exactly the admitted "
                        "transitions (see `curate status`); build without --allow-partial",
                        "--allow-partial",
                    )
                ]
            )
        notes_text = _read_notes(notes) if notes else ""
        result = build_story_release(
            open_workspace(), version, out=out, license=license, name=name, actor=actor, notes=notes_text
        )
        if json_out:
            print_json(result.as_json())
        else:
            out_console.print(
                f"release {result.version} (story_transition): {result.items} transitions, {result.files} files\n"
                f"{result.path}\nmanifest sha256 {result.manifest_sha256}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
        return
    if kind != "mcq":
        raise ValidationFailed([Problem(f"unknown kind {kind!r}; use mcq or story_transition", "--kind")])
    notes_text = _read_notes(notes) if notes else ""
    result = build_release(
        open_workspace(),
        version,
        out=out,
        notes=notes_text,
        allow_partial=allow_partial,
        license=license,
        name=name,
        actor=actor,
        log=lambda line: err_console.print(line, highlight=False, markup=False, soft_wrap=True),
    )
    if json_out:
        print_json(result.as_json())
        return
    for item, reasons in result.dropped.items():
        err_console.print(f"left out {item}: {', '.join(reasons)}", highlight=False, markup=False, soft_wrap=True)
    what = "already built, identical" if result.unchanged else "built"
    out_console.print(
        f"release {result.version} {what}: {result.items} items, {result.files} files, {result.bytes:,} bytes, "
        f"dated {result.release_date}\n{result.path}\nmanifest sha256 {result.manifest_sha256}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def _read_notes(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            [Problem(f"not UTF-8 text (byte {exc.start + 1}); save the notes as UTF-8", "--notes", file=str(path))]
        ) from exc


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
    from exports.verify import verify_release

    report = verify_release(folder, manifest_sha256)
    if json_out:
        print_json(report.as_json())
    else:
        for m in report.mismatches:
            out_console.print(f"{m.kind}: {m.path}: {m.detail}", highlight=False, markup=False, soft_wrap=True)
        verdict = "OK" if report.ok else f"{len(report.mismatches)} mismatch(es)"
        out_console.print(
            f"release {report.version or '?'}: {report.files} files, {report.items} items: {verdict}",
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

    diff = diff_releases(old, new)
    if json_out:
        print_json(diff)
        return
    out_console.print(
        f"{diff['old']['version'] or old} -> {diff['new']['version'] or new}: {len(diff['added'])} added, "
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

    releases = list_releases(open_workspace())
    if json_out:
        print_json(releases)
        return
    if not releases:
        out_console.print("no release published yet; build one with `curate release build 0.1.0`")
    for r in releases:
        flags = (" partial" if r["partial"] else "") + ("" if r["present"] else " (folder missing)")
        out_console.print(
            f"{r['version']}  {r['release_date']}  {r['items']} items  {r['manifest_sha256'][:12]}  {r['path']}{flags}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
