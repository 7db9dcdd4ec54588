"""Issue 40, books: `curate import books` names the user's own file (its book.json and line, or the book and
page) for every problem, never the candidates file it stages inside the workspace; a book.json nested 100,000
deep is a named problem, not a RecursionError; and a book's licence must be open (all or nothing, both databases)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from curation.config import CONFIG_NAME, Settings
from curation.jsonl import MAX_TEXT_CHARS
from curation.screening.tables import Candidate
from curation.workspace import Workspace
from omnicurate.cli.main import app
from omnicurate.demo.story_books import write_epub

runner = CliRunner()


def jpeg(seed: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (64, 48), ((seed * 40) % 256, (seed * 90) % 256, 120)).save(out, "JPEG")
    return out.getvalue()


def book_folder(root: Path, texts: list[str], **meta: Any) -> Path:
    root.mkdir(parents=True)
    for n in range(len(texts)):
        (root / f"p{n}.jpg").write_bytes(jpeg(n))
    data = {"title": "Hawa's Well", "language": "sw", "license": "CC-BY-4.0", **meta}
    data["pages"] = [{"image": f"p{n}.jpg", "text": text} for n, text in enumerate(texts)]
    (root / "book.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return root


def import_books(ws: Workspace, *paths: Path) -> Any:
    result = runner.invoke(app, ["-w", str(ws.root), "import", "books", *map(str, paths)], catch_exceptions=False)
    assert "Traceback" not in result.output and ".books-" not in result.output  # never the staged file
    return result


def problems(result: Any) -> list[str]:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    end = next(n for n, line in enumerate(lines) if line.startswith("error:"))
    return lines[:end]


def candidates(ws: Workspace) -> int:
    with ws.session() as s:
        return int(s.execute(select(func.count()).select_from(Candidate)).scalar_one())


def test_a_book_json_nested_100000_deep_or_not_json_is_named_by_file_and_line(
    workspace: Workspace, tmp_path: Path
) -> None:
    deep = book_folder(tmp_path / "deep", ["One.", "Two."])
    (deep / "book.json").write_text('{"title": "T", "license": "CC-BY-4.0", "pages": ' + "[" * 100_000 + "]" * 100_000)
    broken = book_folder(tmp_path / "broken", ["One.", "Two."])
    (broken / "book.json").write_text('{\n  "title": "T",\n  "license" "CC-BY-4.0"\n}\n')
    nan = book_folder(tmp_path / "nan", ["One.", "Two."])
    (nan / "book.json").write_text(
        json.dumps(
            {"title": "T", "license": "CC-BY-4.0", "pages": [{"image": "p0.jpg", "text": 1}, {"image": "p1.jpg"}]}
        ).replace("1}", "NaN}")
    )
    assert problems(import_books(workspace, deep, broken, nan)) == [
        f"{deep}/book.json: invalid JSON: nested too deeply (at most 32 levels); flatten it",
        f"{broken}/book.json:3: invalid JSON: Expecting ':' delimiter (column 13)",
        f"{nan}/book.json: pages.0.text: NaN is not a number JSON allows; write a number, or null where the field may "
        "be empty",
    ]
    assert candidates(workspace) == 0


def test_problems_found_in_the_staged_candidates_name_the_book_and_page(workspace: Workspace, tmp_path: Path) -> None:
    """What only the candidate import checks (a book's attribution and language are bounded there) is told of the
    book, and a page's over-long text of its page: never of the candidates file staged in the workspace."""
    wordy = book_folder(tmp_path / "wordy", ["One.", "Two.", "Three."], attribution="a" * 2500, language="x" * 60)
    long = book_folder(tmp_path / "long", ["One.", "字" * (MAX_TEXT_CHARS + 1)])
    assert problems(import_books(workspace, wordy, long)) == [
        f"{long}: page 2: text: longer than the limit of {MAX_TEXT_CHARS:,} characters; shorten it",
    ]
    assert problems(import_books(workspace, wordy)) == [
        f"{wordy}: origin.language: String should have at most 50 characters",
        f"{wordy}: origin.attribution: String should have at most 2000 characters",
    ]
    assert candidates(workspace) == 0 and not list((workspace.root / "books").rglob("*.jpg"))


@pytest.mark.parametrize(
    ("rights", "found"),
    [
        ("All rights reserved. Do not copy.", None),
        ("Creative Commons Attribution-NonCommercial 4.0 International", "CC-BY-NC-4.0"),
    ],
)
def test_a_book_under_a_closed_licence_is_refused_by_name(
    workspace: Workspace, tmp_path: Path, rights: str, found: str | None
) -> None:
    epub = write_epub(
        tmp_path / "in" / "closed.epub", "urn:c", "Closed", "en", [("a", jpeg(1)), ("b", jpeg(2))], rights
    )
    folder = book_folder(tmp_path / "folder", ["One.", "Two."], license=rights)
    refused = problems(import_books(workspace, epub, folder))
    if found is None:  # no Creative Commons licence named at all (as before), and the folder's rights line refused
        assert refused[0].startswith(f"{epub}: license: no licence in the package metadata")
    else:
        assert refused[0].startswith(f'{epub}: license: "{found}" is not an open licence; the workspace accepts: ')
    assert refused[1].startswith(f'{folder}: license: "{found or rights}" is not an open licence')
    assert "[licences] add in curate.toml" in refused[1] and len(refused) == 2
    assert candidates(workspace) == 0
    if found is not None:
        settings = Settings.load(workspace.root / CONFIG_NAME)
        settings.licences.add = [found]
        settings.save(workspace.root / CONFIG_NAME)
        assert import_books(workspace, epub, folder).exit_code == 0 and candidates(workspace) == 2
