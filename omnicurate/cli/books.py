"""``curate import books PATH…``: storybooks (EPUB files, ``book.json`` folders) to candidate transitions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import JsonFlag, open_workspace, out_console, print_json


def import_books_cmd(
    paths: Annotated[
        list[Path],
        typer.Argument(help="EPUB files, book folders (book.json beside the images), or folders holding them."),
    ],
    collection: Annotated[
        str, typer.Option(help="The library the books come from (source.collection), unless book.json names one.")
    ] = "books",
    actor: Annotated[str, typer.Option(help="Who is importing (recorded in the event log).")] = "cli",
    json_out: JsonFlag = False,
) -> None:
    """Read every book (all or nothing), then import each pair of consecutive pages as a candidate."""
    from curation.screening.books import import_books

    report = import_books(open_workspace(), paths, collection=collection, actor=actor)
    if json_out:
        c = report.candidates
        print_json(
            {
                "books": report.books,
                "pages": report.pages,
                "images_written": report.images_written,
                "created": c.created,
                "updated": c.updated,
                "unchanged": c.unchanged,
            }
        )
    else:
        out_console.print(report.summary())
