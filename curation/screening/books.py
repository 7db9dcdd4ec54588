"""``curate import books PATH…``: storybooks (EPUB files, ``book.json`` folders, or folders of either) to
candidate transitions, imported exactly as ``curate import candidates`` takes them.

Every book is read and checked first (each problem names the book's file and, where one page is the cause,
the page); only then are the illustrations written into ``<workspace>/books/<book>/`` (named by their
content, so a second run writes nothing) and the candidates imported in one go. A refused run leaves no
file and no candidate behind.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from curation.config import MediaSettings
from curation.errors import MediaError, Problem, ValidationFailed
from curation.jsonl import MAX_TEXT_CHARS, not_a_file
from curation.licences import licence_problem
from curation.media import open_image
from curation.workspace import Workspace

from .book_model import Book, BookProblem, book_slug, candidate_lines, read_folder
from .epub import read_epub
from .importer import CandidateImport, import_candidates

BOOKS_DIR = "books"


@dataclass
class BooksImport:
    books: list[str] = field(default_factory=list)
    pages: int = 0
    images_written: int = 0
    candidates: CandidateImport = field(default_factory=CandidateImport)

    def summary(self) -> str:
        return (
            f"{len(self.books)} book(s), {self.pages} page(s), {self.images_written} new illustration(s); "
            f"candidates: {self.candidates.summary()}"
        )


def book_sources(paths: list[Path]) -> tuple[list[Path], list[Problem]]:
    """The books named: EPUB files, ``book.json`` folders, and the EPUBs and book folders inside a folder
    (one level, sorted). Symbolic links found inside a folder are refused, not followed."""
    found: list[Path] = []
    problems: list[Problem] = []
    for path in paths:
        if path.is_file() and path.suffix.lower() == ".epub" or path.is_dir() and (path / "book.json").exists():
            found.append(path)
        elif path.is_dir():
            inside = sorted(path.iterdir())
            for child in inside:
                if child.is_symlink():
                    problems.append(Problem("a symbolic link; name the book itself", file=str(child)))
                elif (child.is_file() and child.suffix.lower() == ".epub") or (child / "book.json").exists():
                    found.append(child)
            if not any(c.suffix.lower() == ".epub" or (c / "book.json").exists() for c in inside):
                problems.append(Problem("no EPUB file or book.json folder in it", file=str(path)))
        elif (why := not_a_file(path)) is not None and why != "does not exist":
            problems.append(Problem(f"{why}; give an .epub file or a folder with book.json", file=str(path)))
        else:
            problems.append(Problem("not found, or neither an .epub file nor a folder with book.json", file=str(path)))
    return found, problems


def read_books(paths: list[Path], media: MediaSettings | None = None, licences: list[str] | None = None) -> list[Book]:
    """Every book, read and checked; all problems raised together, no book returned half. With ``media``, each
    illustration is held to its limits from its header (a decompression bomb is refused here, by page); with
    ``licences``, the book's licence must be one of them (``curation.licences``)."""
    sources, problems = book_sources(paths)
    books: list[Book] = []
    first: dict[str, Path] = {}
    for source in sources:
        try:
            book = read_folder(source) if source.is_dir() else read_epub(source, book_slug(source.stem))
        except BookProblem as exc:
            problems.append(
                Problem(str(exc), f"page {exc.page}" if exc.page else "", exc.line, exc.file or str(source))
            )
            continue
        book.source = str(source)
        if not book.license:
            problems.append(
                Problem(
                    "no licence in the package metadata (dc:rights, dcterms:license) that names a Creative "
                    f"Commons licence{f' (found {book.license_text!r})' if book.license_text else ''}",
                    "license",
                    file=str(source),
                )
            )
        elif licences is not None and (why := licence_problem(book.license, licences)):
            problems.append(Problem(why, "license", file=str(source)))
        if len(book.pages) < 2:
            problems.append(
                Problem(f"{len(book.pages)} illustrated page(s); a transition needs two", "pages", file=str(source))
            )
        problems += _page_problems(book, source, media)
        if book.id in first:
            problems.append(Problem(f"book id {book.id!r} is also {first[book.id]}'s", "id", file=str(source)))
        first.setdefault(book.id, source)
        if not book.collection and book.publisher:
            book.collection = re.sub(r"[^a-z0-9]+", "_", book.publisher.lower()).strip("_")[:100]
        books.append(book)
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s) in the books; nothing was imported")
    return books


def _page_problems(book: Book, source: Path, media: MediaSettings | None) -> list[Problem]:
    """Each page's text held to the candidate's limit and (``media``) its illustration to the media limits."""
    problems = []
    for page in book.pages:
        where = f"page {page.index + 1}"
        if len(page.text) > MAX_TEXT_CHARS:
            problems.append(
                Problem(
                    f"text: longer than the limit of {MAX_TEXT_CHARS:,} characters; shorten it", where, file=str(source)
                )
            )
        if media is not None:
            try:
                if len(page.image) > media.max_file_mb * 1024 * 1024:
                    raise MediaError(
                        f"{page.image_name}: {len(page.image) / 1e6:,.1f} MB exceeds the limit of "
                        f"{media.max_file_mb:g} MB ([media] max_file_mb)"
                    )
                open_image(io.BytesIO(page.image), page.image_name, media.max_image_pixels).close()
            except MediaError as exc:
                problems.append(Problem(f"image: {exc}", where, file=str(source)))
    return problems


def import_books(ws: Workspace, paths: list[Path], collection: str = "books", actor: str = "cli") -> BooksImport:
    """Read every book, write their illustrations into the workspace, import their transitions.

    ``source.collection`` is the book's own (``book.json``'s ``collection``, the EPUB's publisher as a
    slug), else ``collection``."""
    books = read_books(paths, ws.settings.media, ws.settings.licences.accepted())
    root = ws.root / BOOKS_DIR
    report = BooksImport(books=[b.id for b in books], pages=sum(len(b.pages) for b in books))
    written: list[Path] = []
    made: list[Path] = []
    lines = []
    origins: list[tuple[str, int, int]] = []
    """Per staged line: the book's file (as given) and its current and next page (from 1)."""
    try:
        for book in books:
            folder = root / book.id
            if not folder.is_dir():
                folder.mkdir(parents=True)
                made.append(folder)
            images = []
            for page in book.pages:
                suffix = PurePosixPath(page.image_name).suffix.lower()[:8]
                name = hashlib.sha256(page.image).hexdigest()[:24] + suffix
                target = folder / name
                if not target.is_file():
                    target.write_bytes(page.image)
                    written.append(target)
                images.append(f"{book.id}/{name}")
            lines += candidate_lines(book, collection, images)
            origins += [(book.source, n + 1, n + 2) for n in range(len(book.pages) - 1)]
        report.images_written = len(written)
        handle, name = tempfile.mkstemp(prefix=".books-", suffix=".jsonl", dir=root)
        staged = Path(name)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
            try:
                report.candidates = import_candidates(ws, staged, actor=actor)
            except ValidationFailed as exc:
                raise _in_books(exc, str(staged), origins) from None
        finally:
            staged.unlink(missing_ok=True)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        for folder in reversed(made):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    return report


def _in_books(exc: ValidationFailed, staged: str, origins: list[tuple[str, int, int]]) -> ValidationFailed:
    """The candidate import's refusal of the staged file, told of the books: each problem of a line names the
    book's file and the page its field comes from (``FILE: page N: field: problem``), never the staged file."""
    problems: list[Problem] = []
    for problem in exc.problems:
        if problem.file != staged or problem.line is None or not 0 < problem.line <= len(origins):
            problems.append(problem)
            continue
        book, current, nxt = origins[problem.line - 1]
        side, _, rest = problem.field.removeprefix("origin.").partition(".")
        if side in ("current", "next") and rest:
            page: int | None = current if side == "current" else nxt
            field = rest
        elif problem.field.partition(".")[0] == "speech_lines":
            page, field = nxt, problem.field
        else:  # the book's own metadata, the same on every line
            page, field = None, problem.field
        where = f"page {page}: {field}" if page is not None else field
        problems.append(Problem(problem.message, where, file=book))
    unique = list(dict.fromkeys(problems))
    return ValidationFailed(unique, f"{len(unique)} problem(s) in the books; nothing was imported")
